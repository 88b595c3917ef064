"""Procedural memory tools: plans shared by every agent of the store (create, check, block,
validate, status, list). A validated plan is archived and read-only."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, state
from dokoro_server.bounds import Index, Key, Line, Steps, Title
from dokoro_store.results.plans import (
    Plan,
    PlanBlockerAdded,
    PlanItemChecked,
    PlanList,
    PlanShown,
    PlanValidation,
)
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

if TYPE_CHECKING:
    from dokoro_store import PlanView

__all__ = ["TOOLS", "plan_text"]

_STATUS_ICON = {"draft": "📝", "active": "🔄", "completed": "✅", "validated": "✓", "failed": "❌"}

PlanIdArg = Annotated[
    Key | None,
    Field(description="Plan id (plan-...). Default: the newest live plan that fits the action (see dokoro_plan_list)."),
]
ItemIndexArg = Annotated[Index, Field(ge=1, description="Item number, 1-based, as shown by dokoro_plan_status.")]


def _iso(moment: datetime | None) -> str | None:
    from dokoro_store import iso

    return iso(moment) if moment is not None else None


def _progress(plan: Plan | PlanView) -> str:
    return f"{plan.completion}% ({plan.done}/{plan.total})"


def dokoro_plan_create(
    ctx: Context[AppState],
    title: Annotated[Title, Field(description="What the plan achieves.")],
    items: Annotated[Steps, Field(description="The steps, in order (at least one).")],
    description: Annotated[Line | None, Field(description="Optional context for the plan.")] = None,
    shared: Annotated[
        bool, Field(description="Let other agents check items and validate it too (everyone can read it anyway).")
    ] = False,
) -> Annotated[CallToolResult, Plan]:
    """Create a plan (a checklist every agent of this store can read). Check items off with
    dokoro_plan_check, validate it with dokoro_plan_validate when done. Only you check and
    validate it unless shared=true."""
    plan = state(ctx).store.plans.create(title, items, description, agent_id=acting_agent(ctx), shared=shared)
    text = card(
        "Plan Created",
        plan.title,
        {
            "Plan ID": plan.id,
            "Items": plan.total,
            "Status": plan.status.upper(),
            "Shared": "yes: any agent may check it" if plan.shared else f"no: only {plan.agent_id} checks it",
        },
    )
    return result(text, plan)


def dokoro_plan_check(
    ctx: Context[AppState],
    itemIndex: ItemIndexArg,
    planId: PlanIdArg = None,
    notes: Annotated[Line | None, Field(description="A note kept on the item.")] = None,
    uncheck: Annotated[bool, Field(description="Mark the item not done (reopens a completed plan).")] = False,
) -> Annotated[CallToolResult, PlanItemChecked]:
    """Mark a plan item done (or not done with uncheck=true, which reopens a completed plan).
    Default plan: the newest active one (or completed one, for an uncheck). Archived plans are read-only."""
    from dokoro_store import format_duration

    done = state(ctx).store.plans.check(
        itemIndex, plan_id=planId, notes=notes, uncheck=uncheck, agent=acting_agent(ctx)
    )
    plan, item = done.plan, done.item
    details: dict[str, Any] = {
        "Plan": f"{plan.title} ({plan.id})",
        "Item": f"{item.index}. {item.text}",
        "Progress": _progress(plan),
    }
    if item.completed_at is not None:
        minutes = round((item.completed_at - plan.created_at).total_seconds() / 60)
        details["Time"] = f"{format_duration(minutes)} since the plan was created"
    if done.finished:
        details["Next"] = "all items done — validate with dokoro_plan_validate"
    if done.reopened:
        details["Status"] = "reopened: the plan is active again"
    title = "Item Unchecked" if uncheck else "Item Completed"
    return result(card(title, "", details), done)


def dokoro_plan_blocker(
    ctx: Context[AppState],
    itemIndex: ItemIndexArg,
    blocker: Annotated[Line, Field(description="What blocks the item.")],
    planId: PlanIdArg = None,
) -> Annotated[CallToolResult, PlanBlockerAdded]:
    """Record a blocker on a plan item (shown by dokoro_plan_status and in the validation report)."""
    added = state(ctx).store.plans.add_blocker(itemIndex, blocker, plan_id=planId, agent=acting_agent(ctx))
    text = card(
        "Blocker Added",
        f"⛔ {added.blocker}",
        {"Plan": f"{added.plan.title} ({added.plan.id})", "Item": f"{added.item.index}. {added.item.text}"},
        status="warning",
    )
    return result(text, added)


def dokoro_plan_validate(
    ctx: Context[AppState],
    planId: Annotated[
        Key | None, Field(description="Plan id. Default: the newest live plan that is active or completed.")
    ] = None,
    notes: Annotated[Line | None, Field(description="Validation notes, kept in the report.")] = None,
    requireComplete: Annotated[
        bool, Field(description="Mark the plan failed (and keep it live) unless every item is done.")
    ] = False,
) -> Annotated[CallToolResult, PlanValidation]:
    """Validate a plan: writes a report to daily/<slug>-validation-<planId>.md; a validated plan is
    archived to .mcp/plans/archive/YYYY-MM/ and becomes read-only."""
    done = state(ctx).store.plans.validate(
        plan_id=planId, notes=notes, require_complete=requireComplete, agent=acting_agent(ctx)
    )
    lines = [done.table, "", f"📄 Report saved to: {done.report_relative}"]
    archive = done.archive
    if archive is not None and archive.ok:
        lines.append(f"📦 Plan archived to: .mcp/plans/{archive.archive_path}")
    elif archive is not None:
        lines.append(f"⚠️ Plan archive failed (plan stays live): {archive.error}")
    return result("\n".join(lines), done.result())


def plan_text(plan: PlanView) -> str:
    """A plan as dokoro_plan_status and the ``dokoro://plans/{id}`` resource show it."""
    filled = round(plan.completion / 5)
    lines = [f"## {plan.title}" + (" (archived)" if plan.archived else ""), ""]
    lines.append(f"- **ID:** {plan.id}")
    lines.append(f"- **Status:** {_STATUS_ICON.get(plan.status, '•')} {plan.status.upper()}")
    if plan.archived:
        lines.append(f"- **Archived:** {_iso(plan.archived_at)} → .mcp/plans/{plan.archive_path} (read-only)")
    lines.append(f"- **Progress:** {_progress(plan)}")
    lines.append(f"- **Created:** {_iso(plan.created_at)}")
    lines.append(f"- **Updated:** {_iso(plan.updated_at)}")
    if plan.validated_at is not None:
        lines.append(f"- **Validated:** {_iso(plan.validated_at)}")
    if plan.description:
        lines += ["", plan.description]
    lines += ["", f"[{'█' * filled}{'░' * (20 - filled)}] {plan.completion}%", "", "### Tasks"]
    for item in plan.items:
        line = f"{item.index}. [{'x' if item.completed else ' '}] {item.text}"
        if item.completed_at is not None:
            line += f" ✓ {_iso(item.completed_at)}"
        lines.append(line)
        lines += [f"   ⛔ {blocker}" for blocker in item.blockers]
        if item.notes:
            lines.append(f"   📝 {item.notes}")
    return "\n".join(lines)


def dokoro_plan_status(
    ctx: Context[AppState],
    planId: Annotated[Key | None, Field(description="Plan id. Default: the newest plan, archived included.")] = None,
) -> Annotated[CallToolResult, PlanShown]:
    """Show a plan: status, progress bar, items with completion times, blockers and notes."""
    plan = state(ctx).store.plans.status(planId)
    if plan is None:
        text = card("No Plans", "No plans yet. Create one with dokoro_plan_create.", status="info")
        return result(text, PlanShown(plan=None))
    return result(plan_text(plan), PlanShown(plan=plan.result()))


def dokoro_plan_list(
    ctx: Context[AppState],
    status: Annotated[
        Literal["all", "active", "completed", "validated"], Field(description="Only plans with this status.")
    ] = "all",
) -> Annotated[CallToolResult, PlanList]:
    """List plans: live ones newest first, then archived ones (marked "(archived)")."""
    plans = state(ctx).store.plans.list(status)
    if not plans:
        which = "" if status == "all" else f"{status} "
        return result(
            card("No Plans", f"No {which}plans. Create one with dokoro_plan_create.", status="info"), PlanList(plans=[])
        )
    lines = ["| Status | Plan | Progress | Created |", "|--------|------|----------|---------|"]
    for plan in plans:
        name = plan.title.replace("|", "\\|") + (" (archived)" if plan.archived else "")
        lines.append(
            f"| {_STATUS_ICON.get(plan.status, '•')} {plan.status} | {name} `{plan.id}` | {_progress(plan)} "
            f"| {_iso(plan.created_at)} |"
        )
    return result("\n".join(lines), PlanList(plans=[plan.result() for plan in plans]))


TOOLS = [
    ToolSpec(dokoro_plan_create, "Create a plan"),
    ToolSpec(dokoro_plan_check, "Check off a plan item"),
    ToolSpec(dokoro_plan_blocker, "Record a blocker on a plan item"),
    ToolSpec(dokoro_plan_validate, "Validate (and archive) a plan"),
    ToolSpec(dokoro_plan_status, "Show a plan", read_only=True, idempotent=True),
    ToolSpec(dokoro_plan_list, "List plans", read_only=True, idempotent=True),
]
