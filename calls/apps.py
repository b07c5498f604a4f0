from django.apps import AppConfig
from django.db.backends.signals import connection_created


def use_sqlite_wal(sender, connection, **kwargs):
    """Put an SQLite database in WAL mode, once per file and process.

    The mode is stored in the file; setting it on every new connection (and
    Django opens one per request under ASGI) takes a lock each time and
    made concurrent ingests wait on each other.
    """
    name = connection.settings_dict["NAME"]
    if connection.vendor != "sqlite" or name in _wal_files:
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        if cursor.fetchone()[0] != "wal":
            cursor.execute("PRAGMA journal_mode=WAL")
    _wal_files.add(name)


_wal_files: set = set()


class CallsConfig(AppConfig):
    name = "calls"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        connection_created.connect(use_sqlite_wal)
