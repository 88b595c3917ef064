"""Results of the procedural layer: plans, their items, checks, blockers and validation."""

from __future__ import annotations

from dokoro_store.results.base import IsoTime, Result

__all__ = ["Plan", "PlanBlockerAdded", "PlanItem", "PlanItemChecked", "PlanList", "PlanShown", "PlanValidation"]


class PlanItem(Result):
    index: int  # 1-based, as the agent speaks
    text: str
    completed: bool
    completed_at: IsoTime | None
    notes: str | None
    blockers: tuple[str, ...]


class Plan(Result):
    """A plan with its items; completion is the percentage of items done."""

    id: str
    title: str
    description: str | None
    status: str
    completion: int
    done: int
    total: int
    archived: bool  # archived plans are read-only
    archive_path: str | None  # relative to .mcp/plans/
    created_at: IsoTime
    updated_at: IsoTime
    validated_at: IsoTime | None
    validation_notes: str | None
    agent_id: str | None = None  # who created it
    shared: bool = True  # other agents may check and validate it too (docs/team.md)
    items: tuple[PlanItem, ...]


class PlanItemChecked(Result):
    plan: Plan
    item: PlanItem
    unchecked: bool
    reopened: bool  # unchecking an item made a completed plan active again
    finished: bool  # this check completed the plan


class PlanBlockerAdded(Result):
    plan: Plan
    item: PlanItem
    blocker: str


class PlanValidation(Result):
    plan: Plan
    report: str  # the report's path, relative to the workspace folder
    archived: bool
    archive_path: str | None
    archive_error: str | None  # why archiving a validated plan failed (it then stays live)


class PlanShown(Result):
    plan: Plan | None  # None when there are no plans


class PlanList(Result):
    plans: list[Plan]
