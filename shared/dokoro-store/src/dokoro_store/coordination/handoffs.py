"""Handoffs: work one agent leaves for another, taken by exactly one claimant (reference §2.8)."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlmodel import col, or_, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotOwnerError
from dokoro_store.models import Handoff as HandoffRow
from dokoro_store.results.coordination import Handoff
from dokoro_store.walls.names import optional_name, required_name

__all__ = ["MAX_SUMMARY", "HandoffService"]

MAX_SUMMARY = 20000
MAX_ITEMS = 100


class HandoffService:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def write(
        self,
        from_agent: str,
        summary: str,
        *,
        open_items: list[str] | None = None,
        to_agent: str | None = None,
        session_id: str | None = None,
    ) -> Handoff:
        from_agent = required_name(from_agent, "from_agent")
        if not summary or not summary.strip():
            raise InvalidArgumentError("summary must not be empty: say what is handed over")
        if len(summary) > MAX_SUMMARY:
            raise InvalidArgumentError(f"summary is {len(summary)} characters; at most {MAX_SUMMARY}")
        items = [item.strip() for item in (open_items or []) if item and item.strip()]
        if len(items) > MAX_ITEMS:
            raise InvalidArgumentError(f"at most {MAX_ITEMS} open_items; got {len(items)}")
        handoff = HandoffRow(
            from_agent=from_agent,
            to_agent=optional_name(to_agent, "to_agent"),
            session_id=optional_name(session_id, "session_id"),
            summary=summary.strip(),
            open_items=items or None,
            status="open",
            created_at=self._clock.now(),
        )
        with self._db.write() as session:
            session.add(handoff)
            session.flush()
            return _handoff(handoff)

    def inbox(self, agent_id: str | None = None, *, limit: int = 20) -> list[Handoff]:
        """Open handoffs, newest first; with ``agent_id``, those addressed to it or to anyone."""
        if not 1 <= limit <= 100:
            raise InvalidArgumentError(f"limit must be between 1 and 100; got {limit}")
        statement = select(HandoffRow).where(HandoffRow.status == "open")
        if agent_id is not None and agent_id.strip():
            statement = statement.where(
                or_(col(HandoffRow.to_agent).is_(None), col(HandoffRow.to_agent) == agent_id.strip())
            )
        statement = statement.order_by(col(HandoffRow.created_at).desc(), col(HandoffRow.id).desc()).limit(limit)
        with self._db.read() as session:
            return [_handoff(row) for row in session.exec(statement)]

    def claim(self, handoff_id: int, agent_id: str) -> Handoff:
        """Take an open handoff: exactly one of several concurrent claimants succeeds.

        A handoff addressed to an agent (``to_agent``) is taken only by that agent; one for anyone
        by any agent.
        """
        if handoff_id < 1:
            raise InvalidArgumentError(f"handoff_id must be a positive id from dokoro_handoff_inbox; got {handoff_id}")
        agent_id = required_name(agent_id, "agent_id")
        with self._db.write() as session:
            done = cast(
                "CursorResult[Any]",
                session.execute(
                    update(HandoffRow)
                    .where(
                        col(HandoffRow.id) == handoff_id,
                        col(HandoffRow.status) == "open",
                        or_(col(HandoffRow.to_agent).is_(None), col(HandoffRow.to_agent) == agent_id),
                    )
                    .values(status="claimed", claimed_by=agent_id, claimed_at=self._clock.now())
                ),
            )
            if done.rowcount != 1:
                row = session.get(HandoffRow, handoff_id)
                if row is not None and row.status == "open" and row.to_agent not in (None, agent_id):
                    raise NotOwnerError(
                        f"handoff #{handoff_id} is addressed to {row.to_agent}; you ({agent_id}) may not claim it. "
                        "Take handoffs for you or for anyone (dokoro_handoff_inbox with your agent_id), "
                        f"or ask {row.from_agent} to hand it over to you"
                    )
                raise ConflictError(f"handoff #{handoff_id} is not open (already claimed or missing)")
            handoff = session.get(HandoffRow, handoff_id)
            assert handoff is not None
            return _handoff(handoff)


def _handoff(row: HandoffRow) -> Handoff:
    assert row.id is not None  # flushed
    return Handoff(
        id=row.id,
        from_agent=row.from_agent,
        to_agent=row.to_agent,
        session_id=row.session_id,
        summary=row.summary,
        open_items=list(row.open_items or []),
        status=row.status,
        claimed_by=row.claimed_by,
        created_at=row.created_at,
        claimed_at=row.claimed_at,
    )
