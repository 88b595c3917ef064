"""Where a feature stands, pending work, velocity, the timeline and test checklists — from the
store's rows and documents, each figure saying what it counts."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, result, state
from dokoro_server.bounds import Title
from dokoro_store.results.analytics import FeatureStatus, Pending, TestChecklist, Timeline, Velocity
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

_STATUS_ICON = {"completed": "✅", "in_progress": "🚧", "planned": "📋", "unknown": "❔"}


def dokoro_feature_status(
    ctx: Context[AppState],
    feature: Annotated[Title, Field(description="The feature (its title, words of it, or its id).")],
) -> Annotated[CallToolResult, FeatureStatus]:
    """Where a feature stands: completed, in progress or planned, from the tracked feature (or issue)
    that matches it, with the documents (found by meaning) and plans that mention it."""
    done = state(ctx).store.analytics.feature_status(feature)
    lines = [f"## {_STATUS_ICON.get(done.status, '•')} {done.feature}: {done.status}", "", f"_Basis: {done.basis}_"]
    if done.matches:
        lines += ["", "### Tracked items"]
        for m in done.matches:
            lines.append(f"- `{m.id}` {m.kind} **{m.title}** — {m.status} ({round(m.similarity * 100)}% match)")
    if done.documents:
        lines += ["", "### Documents"]
        for doc in done.documents:
            lines.append(f"- **{doc.title}** (`{doc.filepath}`) — {doc.why}")
            lines += [f"  - {marker}" for marker in doc.markers[:5]]
    if done.plans:
        lines += ["", "### Plans", *(f"- `{p.id}` **{p.title}** — {p.status}, {p.completion}%" for p in done.plans)]
    lines += [f"_Note: {n}_" for n in done.notes]
    return result("\n".join(lines), done)


def dokoro_pending(
    ctx: Context[AppState],
    staleness: Annotated[
        Literal["all", "stale", "very_stale"],
        Field(description="all; stale: untouched for more than 7 days; very_stale: more than 14 days."),
    ] = "all",
) -> Annotated[CallToolResult, Pending]:
    """Open work: issues and features not done, open week items, running or paused task timers, active plans
    with unchecked items, and markdown notes (daily/, insights/, decisions/, ...) whose lines still say todo, in
    progress or pending (or 🚧, 📋), oldest first, with how long each has not moved."""
    done = state(ctx).store.analytics.pending(staleness)
    counts = ", ".join(f"{source} {n}" for source, n in sorted(done.counts.items())) or "nothing"
    lines = [f"## ⏳ Pending ({staleness}): {counts}", "", f"_Counts {done.counted}._", ""]
    lines += [
        f"- [{i.source}] **{i.title}** `{i.id}` — {i.status}, {i.age_days:g} day(s) untouched"
        + (f" ({i.detail})" if i.detail else "")
        for i in done.items
    ] or ["Nothing pending."]
    return result("\n".join(lines), done)


def dokoro_velocity_insights(
    ctx: Context[AppState],
    period: Annotated[Literal["day", "week", "month"], Field(description="The last 1, 7 or 30 days.")] = "week",
) -> Annotated[CallToolResult, Velocity]:
    """How much got done: issues, features, week items, task timers, plan items, sessions and markdown
    documents written or changed in the period, tool calls and their success rate, completions per day and
    the most productive day."""
    done = state(ctx).store.analytics.velocity(period)
    lines = [f"## 📈 Velocity — last {done.days} day(s)", ""]
    lines += [f"- **{f.name}:** {f.value:g} — {f.counts}" for f in done.figures]
    lines += [
        "",
        f"**Completed:** {done.completed} (issues resolved + features completed + week items done + tasks completed"
        f" + plan items checked) · **per day:** {done.average_per_day:g}",
    ]
    if done.most_productive_day:
        lines.append(f"**Most productive day:** {done.most_productive_day}")
    if done.by_day:
        lines += ["", "### By day", *(f"- {d.date}: {d.completed}" for d in done.by_day)]
    return result("\n".join(lines), done)


def dokoro_timeline(
    ctx: Context[AppState],
    range: Annotated[
        Literal["week", "month", "quarter", "all"], Field(description="The last 7, 30 or 90 days, or everything.")
    ] = "month",
    format: Annotated[Literal["text", "json"], Field(description="text, or a JSON array.")] = "text",
) -> Annotated[CallToolResult, Timeline]:
    """What happened, oldest first, grouped by day: issues and features moving, week items done,
    task timers, plans and plan items, session summaries, and markdown documents written or changed."""
    done = state(ctx).store.analytics.timeline(range)
    if format == "json":
        text = json.dumps([e.model_dump(mode="json") for e in done.entries], ensure_ascii=False, indent=1)
        return result(text, done)
    lines = [f"## 🗓️ Timeline ({range}): {len(done.entries)} event(s)"]
    day = None
    for entry in done.entries:
        if entry.date != day:
            day = entry.date
            lines += ["", f"### {day}"]
        who = f" — {entry.agent_id}" if entry.agent_id else ""
        lines.append(f"- {entry.at:%H:%M} [{entry.source}] {entry.action}: {entry.title}{who}")
    if not done.entries:
        lines += ["", "Nothing recorded in this range."]
    return result("\n".join(lines), done)


def dokoro_test_checklist(
    ctx: Context[AppState],
    feature: Annotated[Title, Field(description="The feature to test.")],
    format: Annotated[
        Literal["checklist", "detailed", "json"], Field(description="checklist, detailed (with sources) or json.")
    ] = "checklist",
) -> Annotated[CallToolResult, TestChecklist]:
    """A test checklist for a feature: five standard checks, one per bug already fixed in this area,
    checks from stored notes that record something breaking, and the feature plan's test steps."""
    done = state(ctx).store.analytics.test_checklist(feature, format)
    if format == "json":
        return result(json.dumps([i.model_dump(mode="json") for i in done.items], ensure_ascii=False, indent=1), done)
    lines = [f"## 🧪 Test checklist: {done.feature}", ""]
    for item in done.items:
        lines.append(f"- [ ] {item.text}")
        if format == "detailed" and (item.source or item.why):
            lines.append(f"  - {item.kind}: {item.source or ''} {('— ' + item.why) if item.why else ''}".rstrip())
    lines += [f"_Note: {n}_" for n in done.notes]
    return result("\n".join(lines), done)


TOOLS = [
    # Not read-only: like the search tools, these first index hand-edited workspace markdown.
    ToolSpec(dokoro_feature_status, "Where a feature stands", idempotent=True),
    ToolSpec(dokoro_pending, "Pending work", idempotent=True),
    ToolSpec(dokoro_velocity_insights, "How much got done", idempotent=True),
    ToolSpec(dokoro_timeline, "What happened, day by day", idempotent=True),
    ToolSpec(dokoro_test_checklist, "A test checklist for a feature", idempotent=True),
]
