"""The week's tools: items in currentWeek.md (rows per ISO week), sync from current.md, status."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, secret_notice, state
from dokoro_server.bounds import Key, Title
from dokoro_store.results.tracking import WeeklyAdded, WeeklyItemView, WeeklyStatus, WeeklySync
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from dokoro_tracking.tools._text import reconciled

__all__ = ["TOOLS"]

_ICON = {"issue": "⏳", "feature": "💡", "task": "📌"}


def _line(item: WeeklyItemView) -> str:
    box = "x" if item.status == "done" else " "
    effort = f" (Est: {item.effort})" if item.effort else ""
    ref = f" [{item.ref_id}]" if item.ref_id else ""
    return f"- [{box}] {_ICON.get(item.type, '📌')} **{item.title}** {item.priority}{effort}{ref} `{item.id}`"


def dokoro_weekly_add_item(
    ctx: Context[AppState],
    type: Annotated[Literal["issue", "feature", "task"], Field(description="What kind of item.")],
    title: Annotated[Title, Field(description="The item, in one line.")],
    priority: Annotated[Literal["low", "medium", "high", "critical"], Field(description="How urgent.")] = "medium",
    effort: Annotated[Key | None, Field(description="Effort estimate, e.g. 2h.")] = None,
    id: Annotated[Key | None, Field(description="The issue/feature id it stands for, shown as [id].")] = None,
) -> Annotated[CallToolResult, WeeklyAdded]:
    """Put an item on this ISO week's list (currentWeek.md). A title the week already lists is
    not added twice."""
    done = state(ctx).store.tracking.week.add_item(type, title, priority, effort, id, agent_id=acting_agent(ctx))
    item = done.item
    title_text = "Added to This Week" if done.created else "Already on This Week's List"
    status = "success" if done.created else "info"
    text = card(title_text, _line(item), {"Week": item.week, "File": done.path}, status=status)
    notice = secret_notice(done.redacted)
    return result("\n".join([text, *([notice] if notice else []), *reconciled(done.reconciled)]), done)


def dokoro_weekly_sync(
    ctx: Context[AppState],
    dry_run: Annotated[bool, Field(description="Only show what would be added.")] = False,
) -> Annotated[CallToolResult, WeeklySync]:
    """Copy the unchecked `- [ ]` items of current.md's Progress / Active Task sections onto this
    week's list, typed (bug/fix/error → issue, feature/implement/add → feature, else task) and
    prioritised by their words. Items already listed are skipped."""
    done = state(ctx).store.tracking.week.sync(dry_run, agent_id=acting_agent(ctx))
    verb = "Would add" if dry_run else "Added"
    lines = [f"## 🔄 Weekly sync ({done.week}){' — dry run' if dry_run else ''}", ""]
    lines.append(f"Found {len(done.found)} unchecked item(s) in current.md; {len(done.already_listed)} already listed.")
    if dry_run:
        lines += [
            f"- {c.type} · {c.priority} · {c.title} (from “{c.section}”)"
            for c in done.found
            if c.title not in done.already_listed
        ]
    else:
        lines += [f"{verb} {len(done.added)}:", *(_line(i) for i in done.added)]
    lines += [f"_Note: {n}_" for n in done.notes]
    lines += reconciled(done.reconciled)
    return result("\n".join(lines), done)


def dokoro_weekly_status(
    ctx: Context[AppState],
    include_time: Annotated[bool, Field(description="Add the task time tracked this week, per agent.")] = False,
    include_summary: Annotated[bool, Field(description="Add a one-line summary.")] = True,
) -> Annotated[CallToolResult, WeeklyStatus]:
    """This ISO week's items (done / open), items carried over from earlier weeks, what
    currentWeek.md holds outside dokoro's section, and optionally the time tracked."""
    done = state(ctx).store.tracking.week.status(include_time, include_summary, agent_id=acting_agent(ctx))
    lines = [f"## 📅 Week {done.week} ({done.start} – {done.end})"]
    if done.summary:
        lines += ["", done.summary]
    lines += ["", *(_line(i) for i in done.items)] if done.items else ["", "Nothing on this week's list yet."]
    if done.carried_over:
        lines += ["", "### ↪️ Carried over", *(f"{_line(i)} (from {i.week})" for i in done.carried_over)]
    if done.outside is not None and (done.outside.checkboxes or done.outside.headed_items):
        ticked = f"{done.outside.checked}/{done.outside.checkboxes}"
        lines += ["", f"### Your notes in currentWeek.md: {ticked} boxes ticked"]
        lines += [f"- {h}" for h in done.outside.headed_items]
    if done.time is not None:
        from dokoro_store import format_duration

        per = ", ".join(f"{a} {format_duration(round(s / 60))}" for a, s in sorted(done.time.per_agent_seconds.items()))
        lines += [
            "",
            f"**Tracked this week:** {format_duration(round(done.time.total_seconds / 60))}"
            f" ({done.time.tasks_completed} task(s) completed){'; ' + per if per else ''}",
        ]
    lines += reconciled(done.reconciled)
    return result("\n".join(lines), done)


TOOLS = [
    ToolSpec(dokoro_weekly_add_item, "Add an item to this week's list", idempotent=True),  # never listed twice
    ToolSpec(dokoro_weekly_sync, "Sync this week's list from current.md", idempotent=True),  # skips listed items
    ToolSpec(dokoro_weekly_status, "This week's status", read_only=True, idempotent=True),
]
