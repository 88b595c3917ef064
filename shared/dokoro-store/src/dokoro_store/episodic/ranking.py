"""How the episodic recall filters and ranks summaries: the filter bounds, the similar-summaries
leg, the ranking label and the hit built from a row (helpers of ``episodic``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import col

from dokoro_store.clock import parse_iso
from dokoro_store.episodic.results import (
    VECTOR_FLOOR,
    RecallHit,
)
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import ConversationSummary

if TYPE_CHECKING:
    from dokoro_store.episodic.summary_search import SummaryFilter


def _merge_lists(lists: object) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:  # type: ignore[attr-defined]
        for item in items or []:
            seen.setdefault(str(item), None)
    return list(seen)


def _bound(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise InvalidArgumentError(f"{name}: {exc}") from None


def _filtered(statement: Any, where: SummaryFilter) -> Any:
    """``statement`` with the session, since and until conditions."""
    if where.session_id:
        statement = statement.where(ConversationSummary.session_id == where.session_id)
    if where.since is not None:
        statement = statement.where(col(ConversationSummary.started_at) >= where.since)
    if where.until is not None:
        statement = statement.where(col(ConversationSummary.started_at) <= where.until)
    return statement


@dataclass(frozen=True)
class _Similar:
    """What recall's vector leg found: cosines by summary id, the nearest ones, the embedder."""

    cosines: dict[int, float] = field(default_factory=dict)
    nearest: dict[int, float] = field(default_factory=dict)
    embedder: str | None = None
    why_not: str | None = None
    below_floor: list[tuple[int, float]] = field(default_factory=list)  # the nearest under the floor, best first


def _ranking(text: int, substring: int, similar: _Similar, candidates: int) -> str:
    """How recall ranked: the legs that found candidates, and the embedder (or why there was none)."""
    legs = f"full text {text}, substring {substring}; {candidates} candidates"
    if similar.embedder is None:
        return f"relevance without similarity ({similar.why_not}; {legs})"
    return f"relevance (similarity by {similar.embedder}, {len(similar.nearest)} nearest ≥ {VECTOR_FLOOR}; {legs})"


def _hit(row: ConversationSummary | Any) -> RecallHit:
    """The hit of a summary: its ORM row or a Core row of ``conversation_summaries``."""
    return RecallHit(
        id=int(row.id or 0),
        session_id=row.session_id,
        ai_model=row.ai_model,
        summary=row.summary,
        started_at=row.started_at,
        message_count=row.message_count,
        token_count=row.token_count,
        key_decisions=list(row.key_decisions or []),
        key_topics=list(row.key_topics or []),
        compacted=row.compacted,
    )
