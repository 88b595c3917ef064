"""A cheap "has anything been written?" signal, for screens that poll the store (``dokoro browse``).

Re-reading every table a screen shows, every second or two, would be wasteful when nothing has
changed, which is most of the time. Each backend has a counter that moves when a write commits:

- SQLite: ``PRAGMA data_version`` on a connection held for the purpose. It changes when any
  *other* connection commits, which is every write here (the pool never lends this connection
  out), including writes of this very process and of other processes.
- PostgreSQL: ``pg_snapshot_xmax(pg_current_snapshot())``, the next transaction id to be
  assigned. A transaction gets one at its first write, so the value moves with every write in
  the cluster (other databases too: a spurious "changed" only costs one re-read).

A token that did not move means nothing was written; a token that moved means "re-read and
compare", never more.
"""

from __future__ import annotations

import threading
from typing import Any

from dokoro_store.db.engine import Database
from dokoro_store.errors import StoreUnavailableError

__all__ = ["ChangeSignal"]


class ChangeSignal:
    """Polls the backend's write counter; thread-safe; ``close()`` it when done."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._connection: Any = None
        self._closed = False

    def _query(self) -> str:
        if self._db.dialect == "sqlite":
            return "PRAGMA data_version"
        return "SELECT pg_snapshot_xmax(pg_current_snapshot())::text"

    def token(self) -> str:
        """The current value of the write counter (compare it with the previous one)."""
        with self._lock:
            if self._closed:
                raise StoreUnavailableError("the change signal was closed")
            if self._connection is None:
                self._connection = self._db.engine.raw_connection()
                # Ours alone: never handed back to the pool (its settings differ from a pooled one's).
                self._connection.detach()
                if self._db.dialect != "sqlite":
                    # psycopg: no transaction left open between polls (it would pin a snapshot).
                    self._connection.dbapi_connection.autocommit = True
            cursor = self._connection.cursor()
            try:
                cursor.execute(self._query())
                row = cursor.fetchone()
            finally:
                cursor.close()
            return str(row[0])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._connection is not None:
                self._connection.close()
                self._connection = None
