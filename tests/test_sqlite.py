import pytest
from django.db import connection


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite only")
def test_the_embedded_database_runs_in_wal_mode(db):
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
