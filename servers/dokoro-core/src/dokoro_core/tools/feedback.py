"""Affective memory tools: record tool outcomes, tally them, and route to the tools that work."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import Count, IsoDate, Key, Mapping, Milliseconds
from dokoro_store.results.feedback import RecordedOutcome, Routes, ToolTallies
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

Outcome = Literal["success", "failure", "partial", "rejected", "timeout"]


def _flush(ctx: Context[AppState]) -> None:
    from dokoro_server import flush_feedback

    flush_feedback(state(ctx))


def dokoro_feedback_record(
    ctx: Context[AppState],
    tool_name: Annotated[str, Field(min_length=1, max_length=200, description="The tool whose outcome this is.")],
    outcome: Annotated[Outcome, Field(description="How the call went.")],
    agent_id: Annotated[
        str | None,
        Field(max_length=200, description="Who made the call; default: you (DOKORO_AGENT_ID or your token's agent)."),
    ] = None,
    confidence: Annotated[float | None, Field(ge=0, le=1, description="How sure you are of the outcome, 0..1.")] = None,
    latency_ms: Annotated[
        Milliseconds | None, Field(ge=0, description="How long the call took, in milliseconds.")
    ] = None,
    error_message: Annotated[str | None, Field(max_length=4000, description="What went wrong, for a failure.")] = None,
    doc_id: Annotated[Key | None, Field(description="A document the call was about.")] = None,
    session_id: Annotated[Key | None, Field(description="The session the call belongs to.")] = None,
    metadata: Annotated[Mapping | None, Field(description="Anything else worth keeping.")] = None,
) -> Annotated[CallToolResult, RecordedOutcome]:
    """Record how a tool call went (success, failure, partial, rejected, timeout). Every dokoro call
    is already recorded automatically; use this for other tools, or to add a judgment and context."""
    row = state(ctx).store.feedback.record(
        acting_agent(ctx, agent_id),
        tool_name,
        outcome,
        confidence=confidence,
        latency_ms=latency_ms,
        error_message=error_message,
        doc_id=doc_id,
        session_id=session_id,
        metadata=metadata,
    )
    return result(f"recorded {row.outcome} for {row.tool_name}", row)


def dokoro_feedback_query(
    ctx: Context[AppState],
    tool_name: Annotated[Key | None, Field(description="Only this tool.")] = None,
    agent_id: Annotated[Key | None, Field(description="Only this agent's outcomes.")] = None,
    since: Annotated[
        IsoDate | None,
        Field(description="Only outcomes at or after this UTC time: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ."),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=500, description="How many tools to list.")] = 50,
) -> Annotated[CallToolResult, ToolTallies]:
    """Outcome counts per tool, most used first: total, successes, failures, success rate and
    average confidence."""
    app = state(ctx)
    _flush(ctx)
    tallies = app.store.feedback.query(tool_name=tool_name, agent_id=agent_id, since=since, limit=limit)
    out = ToolTallies(tools=tallies)
    if not tallies:
        return result("(no feedback recorded)", out)
    lines = []
    for t in tallies:
        confidence = "n/a" if t.avg_confidence is None else f"{t.avg_confidence:.3f}"
        lines.append(
            f"{t.tool_name}: total={t.total} success={t.success} failure={t.failure} "
            f"success_rate={t.success_rate:.3f} avg_confidence={confidence}"
        )
    return result("\n".join(lines), out)


def dokoro_feedback_route(
    ctx: Context[AppState],
    tool_name: Annotated[Key | None, Field(description="Only this tool.")] = None,
    agent_id: Annotated[
        Key | None, Field(description="Only this agent (rows are then per tool); default: every agent, per agent.")
    ] = None,
    half_life_days: Annotated[
        float, Field(gt=0, le=36500, description="Recency half-life of the decayed success rate, in days.")
    ] = 14,
    min_samples: Annotated[Count, Field(gt=0, description="Outcomes needed before a row is marked confident.")] = 5,
    confidence_level: Annotated[
        float, Field(ge=0.5, lt=1, description="Confidence of the Wilson lower bound (0.95 → z = 1.96).")
    ] = 0.95,
) -> Annotated[CallToolResult, Routes]:
    """Which tools can you trust? Ranks tools (per agent) by the Wilson lower bound of their success rate
    over outcomes weighted by recency (half_life_days), so 95/100 beats one lucky success and stale failures
    fade; also reports the recency-decayed success rate and the bound on the raw counts."""
    from dokoro_store import z_for_confidence

    app = state(ctx)
    _flush(ctx)
    routes = app.store.feedback.route(
        tool_name=tool_name,
        agent_id=agent_id,
        half_life_days=half_life_days,
        min_samples=min_samples,
        confidence_level=confidence_level,
    )
    per_agent = not (agent_id and agent_id.strip())
    out = Routes(
        grouped_by="agent_and_tool" if per_agent else "tool",
        half_life_days=half_life_days,
        min_samples=min_samples,
        confidence_level=confidence_level,
        z=z_for_confidence(confidence_level),
        routes=routes,
    )
    if not routes:
        return result("(no feedback recorded)", out)
    lines = []
    for r in routes:
        agent = f" agent={r.agent_id}" if per_agent else ""
        lines.append(
            f"{r.tool_name}{agent} n={r.n} success={r.success} failure={r.failure} partial={r.partial} "
            f"rejected={r.rejected} timeout={r.timeout} decayed_rate={r.decayed_rate:.3f} "
            f"wilson_lower={r.wilson_lower:.4f} confident={'true' if r.confident else 'false'} "
            f"decayed_wilson={r.decayed_wilson:.4f}"
        )
    lines += [
        "",
        f"(ranked by decayed_wilson: the Wilson lower bound at z={out.z:.2f} of the outcomes weighted by recency, "
        f"half-life {half_life_days:g} days — an outcome that old counts half, so stale failures fade; "
        "wilson_lower is the same bound on the raw counts)",
    ]
    return result("\n".join(lines), out)


TOOLS = [
    ToolSpec(dokoro_feedback_record, "Record a tool outcome"),
    ToolSpec(dokoro_feedback_query, "Tally tool outcomes", read_only=True, idempotent=True),
    ToolSpec(dokoro_feedback_route, "Rank tools by reliability", read_only=True, idempotent=True),
]
