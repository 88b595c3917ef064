"""Compaction of a session's summaries, in two committed steps (see :mod:`.service`).

1. *pre-flush*: the session is marked ``compactionPending`` (:func:`mark_pending`, or
   :func:`mark_pending_plain` in the summary write's own transaction);
2. *fold*: in one transaction the merged text is written to the session, the source rows are
   deleted, one ``compacted`` row is inserted and the mark is cleared (:func:`fold`).

A crash after step 1 leaves the mark; :func:`pending_sessions` finds it when a store is opened and
the fold is done again from the rows as they are. Step 2 is atomic, so nothing is lost or counted twice.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func
from sqlmodel import Session, col, select

from dokoro_store.clock import iso
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.episodic.ranking import _merge_lists
from dokoro_store.episodic.results import COMPACTION_MODEL, CompactionResult
from dokoro_store.limits import MAX_SUM
from dokoro_store.models import ConversationSummary, EpisodeSession

__all__ = ["fold", "mark_pending", "mark_pending_plain", "pending_sessions", "uncompacted_tokens"]


def uncompacted_tokens(session: Session, session_id: str) -> int:
    """The tokens of a session's summaries not folded yet."""
    total = session.exec(
        select(func.coalesce(func.sum(ConversationSummary.token_count), 0)).where(
            ConversationSummary.session_id == session_id,
            col(ConversationSummary.compacted).is_(False),
        )
    ).one()
    return int(total or 0)


def mark_pending(session: Session, session_id: str, now: datetime) -> None:
    """Step 1 (the pre-flush), in the caller's write: the session is marked ``compactionPending``."""
    row = session.get(EpisodeSession, session_id, with_for_update=True)
    if row is None:
        return
    meta = dict(row.metadata_json or {})
    meta["compactionPending"] = True
    meta["preFlushAt"] = iso(now)
    row.metadata_json = meta
    session.add(row)


def mark_pending_plain(connection: Connection, session_id: str, now: datetime) -> None:
    """:func:`mark_pending` inside a plain write (FOR UPDATE serialises it on PostgreSQL)."""
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


def fold(db: Database, now: datetime, session_id: str) -> CompactionResult | None:
    """Step 2: fold every summary of a marked session into one row, atomically."""
    with db.write() as session:
        # FOR UPDATE serialises folds of one session on PostgreSQL (SQLite's BEGIN IMMEDIATE already does).
        owner = session.get(EpisodeSession, session_id, with_for_update=True)
        if owner is None or not (owner.metadata_json or {}).get("compactionPending"):
            # Another process folded it first, or it was never marked.
            return None
        rows = list(
            session.exec(
                select(ConversationSummary)
                .where(ConversationSummary.session_id == session_id)
                .order_by(col(ConversationSummary.started_at), col(ConversationSummary.id))
            )
        )
        meta = dict(owner.metadata_json or {})
        meta.pop("compactionPending", None)
        meta.pop("preFlushAt", None)
        if not rows:
            owner.metadata_json = meta
            session.add(owner)
            return CompactionResult(session_id, 0, 0)
        count = len(rows)
        parts = [
            f"[{i}/{count}] ({row.ai_model}, ~{row.token_count or 0} tokens): {row.summary}"
            for i, row in enumerate(rows, start=1)
        ]
        merged = "\n\n".join(parts)
        total = min(sum(row.token_count or 0 for row in rows), MAX_SUM)
        decisions = _merge_lists(row.key_decisions for row in rows)
        topics = _merge_lists(row.key_topics for row in rows)
        messages = [row.message_count for row in rows if row.message_count is not None]
        latest = max(row.started_at for row in rows)
        for row in rows:
            session.delete(row)
        folded = ConversationSummary(
            session_id=session_id,
            ai_model=COMPACTION_MODEL,
            summary=merged,
            key_decisions=decisions or None,
            key_topics=topics or None,
            message_count=min(sum(messages), MAX_SUM) if messages else None,
            token_count=total,
            started_at=latest,
            created_at=now,
            compacted=True,
        )
        session.add(folded)
        session.flush()
        folded_id = folded.id
        meta.update(lastCompactedAt=iso(now), compactedTokens=total, compactedCount=count)
        owner.summary = merged
        owner.metadata_json = meta
        session.add(owner)
    return CompactionResult(session_id, count, total, folded_id)


def pending_sessions(db: Database) -> list[str]:
    """The sessions marked for a fold that has not happened yet (a crash between the two steps)."""
    # Only the id and the small metadata column: never the (possibly long) compacted texts.
    with db.read() as session:
        rows = session.exec(
            select(EpisodeSession.id, EpisodeSession.metadata_json).where(
                col(EpisodeSession.metadata_json).is_not(None)
            )
        )
        return [session_id for session_id, meta in rows if (meta or {}).get("compactionPending")]
