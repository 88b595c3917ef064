"""The episodic layer's Core statements: built once per store, bound at each call.

The hot paths (``dokoro_session_summary_add``, a recall without a query) run plain Core statements
in one short transaction rather than an ORM unit of work; building a statement costs more than
running it, so each is built once (statements are immutable) and only its parameters change.
The database's redaction hook still sees every write statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, func, insert, select

from dokoro_store.clock import iso
from dokoro_store.db.model_tables import table_of
from dokoro_store.models import ConversationSummary, EpisodeSession

if TYPE_CHECKING:
    from dokoro_store.db.engine import Database
    from dokoro_store.episodic.summary_search import SummaryFilter

__all__ = ["EpisodicStatements", "WriteStatements", "mark_pending_plain"]


@dataclass(frozen=True)
class WriteStatements:
    session: Any  # the session row, kept when it exists (the dialect's INSERT ... ON CONFLICT DO NOTHING)
    summary: Any  # INSERT ... RETURNING id
    uncompacted: Any  # the session's uncompacted token total


class EpisodicStatements:
    """The statements of one store's episodic layer, each built on first use."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._write: WriteStatements | None = None
        self._newest: dict[tuple[bool, bool, bool], Any] = {}

    def write(self) -> WriteStatements:
        """The write path's statements: the session row, the summary, the uncompacted total."""
        if self._write is None:
            sessions, summaries = table_of(EpisodeSession), table_of(ConversationSummary)
            session_row = self._db.ops.upsert(
                sessions,
                {"id": bindparam("id"), "started_at": bindparam("started_at"), "status": "completed"},
                ["id"],
                None,
            )
            uncompacted = select(func.coalesce(func.sum(summaries.c.token_count), 0)).where(
                summaries.c.session_id == bindparam("session_id"), summaries.c.compacted.is_(False)
            )
            self._write = WriteStatements(session_row, insert(summaries).returning(summaries.c.id), uncompacted)
        return self._write

    def newest(self, where: SummaryFilter) -> tuple[Any, dict[str, Any]]:
        """The newest summaries passing ``where``: a statement built once per combination of
        filters, and its parameters."""
        shape = (where.session_id is not None, where.since is not None, where.until is not None)
        statement = self._newest.get(shape)
        if statement is None:
            summaries = table_of(ConversationSummary)
            statement = select(summaries)
            if shape[0]:
                statement = statement.where(summaries.c.session_id == bindparam("session_id"))
            if shape[1]:
                statement = statement.where(summaries.c.started_at >= bindparam("since"))
            if shape[2]:
                statement = statement.where(summaries.c.started_at <= bindparam("until"))
            statement = statement.order_by(summaries.c.started_at.desc(), summaries.c.id.desc()).limit(
                bindparam("limit")
            )
            self._newest[shape] = statement
        params = {"session_id": where.session_id, "since": where.since, "until": where.until}
        return statement, {key: value for key, value in params.items() if value is not None}


def mark_pending_plain(connection: Connection, session_id: str, now: datetime) -> None:
    """A session marked for compaction inside a plain write (FOR UPDATE serialises it on PostgreSQL)."""
    sessions = table_of(EpisodeSession)
    found = connection.execute(
        select(sessions.c.metadata_json).where(sessions.c.id == session_id).with_for_update()
    ).first()
    if found is None:
        return
    meta = dict(found.metadata_json or {})
    meta["compactionPending"] = True
    meta["preFlushAt"] = iso(now)
    connection.execute(sessions.update().where(sessions.c.id == session_id).values(metadata_json=meta))
