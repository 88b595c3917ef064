"""Single tool outcomes of the affective layer, newest first (what ``dokoro browse`` lists)."""

from __future__ import annotations

from dokoro_store.results.base import IsoTime, Result

__all__ = ["FeedbackEvent"]


class FeedbackEvent(Result):
    id: int
    agent_id: str
    tool_name: str
    outcome: str
    confidence: float | None = None
    latency_ms: int | None = None
    error_message: str | None = None
    session_id: str | None = None
    recorded_at: IsoTime
