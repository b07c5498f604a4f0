"""What calls tells the rest of the project, without knowing who listens.

`findings_recorded` is sent inside the ingest transaction, with the findings a
request or an event post showed for the first time: the triage app flags the call
from it. A receiver runs in that transaction, so it must be quick and must not
fail: what it writes commits or rolls back with the request.
"""

from django.dispatch import Signal

findings_recorded = Signal()  # sender=Call, call=Call, findings=list[calls.models.Finding]
