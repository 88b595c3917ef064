"""Placing a document in a thread as it is written: the conversation or session it belongs to.

Hybrid search lifts the neighbours of a match (:mod:`.neighbours`, :mod:`.hybrid`): the entries
one and two places before and after it in its thread. A bulk import knows every place up front
(``NewDocument(thread=…, thread_pos=…)``); a tool call writes one text at a time
(``search_index_content``'s ``thread`` and ``at``, ``dokoro_remember``'s ``session_id``), so its place
is found here, inside the write transaction that saves the document:

- without ``at``, or at or after the thread's latest entry: the next place (appended, nothing moves);
- written earlier than some entries (``at`` before theirs): after every entry written at or before
  ``at`` (ties keep the order of the calls), and the entries after it move one place on;
- a document already in the thread keeps its place unless ``at`` moves it; one moved to another
  thread leaves no gap behind.

Places stay 0, 1, 2, … with no gaps, so "two places away" means two entries. Concurrent writers
of one thread take turns on a lock of the thread (``lock_keys``; on SQLite the write transaction
already holds the database's one write lock). Every statement uses the ``(thread, thread_pos)``
index; only an out-of-order write reads the thread's times.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func, select, update
from sqlalchemy.orm import Session

from dokoro_store.db.dialect import DialectOps
from dokoro_store.db.driver_sql import driver_mark
from dokoro_store.db.types import utc_from_db
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.index import docs_table

__all__ = ["MAX_THREAD_CHARS", "clean_thread", "place_in_thread"]

MAX_THREAD_CHARS = 200


def clean_thread(thread: str | None) -> str | None:
    """The thread id as stored (stripped), None for none; refuses one too long to be an id."""
    if thread is None or not thread.strip():
        return None
    value = thread.strip()
    if len(value) > MAX_THREAD_CHARS:
        raise InvalidArgumentError(
            f"thread must be an id of at most {MAX_THREAD_CHARS} characters (a conversation or session id)"
        )
    return value


def place_in_thread(
    session: Session | Connection, ops: DialectOps, doc_id: str, thread: str, at: datetime | None
) -> int:
    """The place of ``doc_id`` in ``thread`` written at ``at`` (None: now, after every entry).

    Call it in the write transaction that saves the document, before the document's row takes
    the place (``docs.thread``/``thread_pos`` and ``created_at`` = ``at`` are the caller's to
    write); the entries it moves are moved here. The common case (a new text appended) is two
    indexed reads handed to the driver as they are (building them as expressions cost more than
    running them).
    """
    ops.lock_keys(session, "thread", [thread])
    connection = session if isinstance(session, Connection) else session.connection()
    mark = driver_mark(connection)
    current = connection.exec_driver_sql(
        f"SELECT thread, thread_pos, created_at FROM docs WHERE id = {mark}", (doc_id,)
    ).first()
    if (
        current is not None
        and current[0] == thread
        and current[1] is not None
        and (at is None or utc_from_db(current[2]) == at)
    ):
        return int(current[1])  # re-indexed in place
    d = docs_table.c
    if current is not None and current[0] is not None and current[1] is not None:
        # Leaving its place (another thread, or another time): the entries after it close the gap.
        connection.execute(update(docs_table).where(d.id == doc_id).values(thread=None, thread_pos=None))
        connection.execute(
            update(docs_table)
            .where(d.thread == current[0], d.thread_pos > current[1])
            .values(thread_pos=d.thread_pos - 1)
        )
    last = connection.exec_driver_sql(
        f"SELECT thread_pos, created_at FROM docs WHERE thread = {mark} AND thread_pos IS NOT NULL "
        "ORDER BY thread_pos DESC LIMIT 1",
        (thread,),
    ).first()
    if last is None:
        return 0
    latest = utc_from_db(last[1])
    if at is None or latest is None or latest <= at:
        return int(last[0]) + 1
    # Written before some entries: after every entry written at or before ``at``.
    before = connection.execute(select(func.max(d.thread_pos)).where(d.thread == thread, d.created_at <= at)).scalar()
    place = 0 if before is None else int(before) + 1
    connection.execute(
        update(docs_table).where(d.thread == thread, d.thread_pos >= place).values(thread_pos=d.thread_pos + 1)
    )
    return place
