from django.apps import AppConfig


class TriageConfig(AppConfig):
    """The team's side of a flagged call: queue, status, assignee, comments,
    notifications, presence, activity, webhooks and rollups. It listens to what
    calls records (calls.signals) and never changes how a call is captured."""

    name = "triage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from calls.signals import findings_recorded

        from .flagging import on_findings

        findings_recorded.connect(on_findings, dispatch_uid="triage-flagging")
