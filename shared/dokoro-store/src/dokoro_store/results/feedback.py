"""Results of the affective layer: recorded outcomes, tallies per tool, and routes.

Rates are full-precision floats in Python and rounded to six decimals on the wire.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result
from dokoro_store.results.rounding import rounded

__all__ = ["RecordedOutcome", "Route", "Routes", "ToolTallies", "ToolTally"]

Rate = Annotated[float, rounded(6)]


class RecordedOutcome(Result):
    """One recorded tool outcome, stamped with the database clock."""

    id: int
    agent_id: str
    tool_name: str
    outcome: str
    recorded_at: IsoTime


class ToolTally(Result):
    """Outcome counts of one tool (``dokoro_feedback_query``)."""

    tool_name: str
    total: int
    success: int
    failure: int
    partial: int
    rejected: int
    timeout: int
    success_rate: Rate
    avg_confidence: float | None
    avg_latency_ms: float | None


class ToolTallies(Result):
    tools: list[ToolTally]


class Route(Result):
    """How far one agent can trust one tool (``dokoro_feedback_route``)."""

    tool_name: str
    agent_id: str
    n: int
    success: int
    failure: int
    partial: int
    rejected: int
    timeout: int
    decayed_rate: Rate
    wilson_lower: Rate = Field(description="Wilson lower bound of the raw counts (the reference's ranking).")
    decayed_wilson: Rate = Field(
        description="What ranks: the Wilson lower bound of the outcomes weighted by recency (half-life)."
    )
    weighted_n: Rate = Field(description="The outcomes' summed recency weights: the evidence decayed_wilson rests on.")
    confident: bool


class Routes(Result):
    """Routes ranked by the Wilson lower bound of the recency-weighted outcomes, with the parameters
    they were computed with."""

    grouped_by: Literal["tool", "agent_and_tool"]
    half_life_days: float
    min_samples: int
    confidence_level: float
    z: float
    routes: list[Route]
