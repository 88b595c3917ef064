"""The affective layer's rows one by one, newest first: what a person scrolls through.

:class:`~dokoro_store.affective.service.FeedbackService` aggregates (tallies, routing); this reads
single outcomes, bounded by ``limit`` so a million rows never reach Python.
"""

from __future__ import annotations

from sqlmodel import col, select

from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import AgentFeedback
from dokoro_store.results.feedback_log import FeedbackEvent

__all__ = ["FeedbackLog"]

MAX_LIMIT = 1000


class FeedbackLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    def recent(self, limit: int = 200) -> list[FeedbackEvent]:
        """The latest ``limit`` outcomes, newest first."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
        statement = (
            select(AgentFeedback)
            .order_by(col(AgentFeedback.recorded_at).desc(), col(AgentFeedback.id).desc())
            .limit(limit)
        )
        with self._db.read() as session:
            rows = list(session.exec(statement))
        return [
            FeedbackEvent(
                id=int(row.id or 0),
                agent_id=row.agent_id,
                tool_name=row.tool_name,
                outcome=row.outcome,
                confidence=row.confidence,
                latency_ms=row.latency_ms,
                error_message=row.error_message,
                session_id=row.session_id,
                recorded_at=row.recorded_at,
            )
            for row in rows
        ]
