"""Statements handed to the database driver as they are, for the few hot reads where building them
as SQLAlchemy expressions cost more than running them (an IN list whose length changes with every
query is expanded and cached anew each time: 5.0 → 1.6 ms of CPU for 150 candidates, measured in
:mod:`dokoro_store.index.ranking.neighbours`).

Only fixed SQL text and bound parameters: nothing a caller passes is ever spliced into the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

__all__ = ["IN_BATCH", "driver_mark", "rows_by_ids"]

IN_BATCH = 500  # ids per statement: far below SQLite's 32k variables and PostgreSQL's 65k


def driver_mark(connection: Connection) -> str:
    """The driver's placeholder: ``?`` for sqlite3, ``%s`` for psycopg."""
    return "?" if connection.dialect.paramstyle == "qmark" else "%s"


def rows_by_ids(connection: Connection, select_from: str, ids: Sequence[str], also: str = "") -> list[Any]:
    """``{select_from} WHERE id IN (…ids) {also}``, in batches of :data:`IN_BATCH` ids.

    ``select_from`` and ``also`` are the caller's fixed SQL (``"SELECT id, title FROM docs"``,
    ``"AND thread IS NOT NULL"``); the ids are bound parameters.
    """
    mark = driver_mark(connection)
    rows: list[Any] = []
    for start in range(0, len(ids), IN_BATCH):
        batch = tuple(ids[start : start + IN_BATCH])
        marks = ", ".join([mark] * len(batch))
        rows += connection.exec_driver_sql(f"{select_from} WHERE id IN ({marks}) {also}".rstrip(), batch).all()
    return rows
