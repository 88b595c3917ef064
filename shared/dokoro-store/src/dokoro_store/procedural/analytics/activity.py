"""What happened between two instants, read from every layer's rows (not from file times).

One :class:`Activity` per fact: an issue or feature changing status (its history), a week item
ticked off, a task timer completed, a plan created or validated, a plan item checked, a session
summary written. Velocity, the timeline and the weekly compression all count these, so they
agree with each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlmodel import col

from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.models import (
    AgentFeedback,
    ConversationSummary,
    Plan,
    PlanItem,
    TaskTimer,
    TrackingEvent,
    TrackingItem,
    WeeklyItem,
)

__all__ = ["COMPLETIONS", "Activity", "ToolCalls", "collect", "tool_calls"]

# (source, action) pairs that count as something finished.
COMPLETIONS = {
    ("issue", "resolved"),
    ("feature", "completed"),
    ("weekly", "done"),
    ("task", "completed"),
    ("plan", "item checked"),
}


@dataclass(frozen=True)
class Activity:
    at: datetime
    source: str  # issue | feature | weekly | task | plan | session
    action: str
    title: str
    ref: str | None
    agent_id: str | None = None

    @property
    def completion(self) -> bool:
        return (self.source, self.action) in COMPLETIONS


def _between(column: Any, start: datetime | None, end: datetime) -> list[Any]:
    clauses = [column < end]
    if start is not None:
        clauses.append(column >= start)
    return clauses


def _event_action(event: TrackingEvent) -> str:
    if event.action == "added":
        return "added"
    if event.to_status and event.to_status != event.from_status:
        return {"active": "started", "planned": "planned"}.get(event.to_status, event.to_status)
    return event.action


def collect(db: Database, start: datetime | None, end: datetime) -> list[Activity]:
    """Every activity in [start, end) (from the beginning when ``start`` is None), oldest first."""
    found: list[Activity] = []
    with db.read() as session:
        events = session.execute(
            select(TrackingEvent, col(TrackingItem.kind), col(TrackingItem.title))
            .join(TrackingItem, col(TrackingItem.id) == col(TrackingEvent.item_id))
            .where(*_between(col(TrackingEvent.at), start, end))
        ).all()
        for event, kind, title in events:
            found.append(Activity(event.at, kind, _event_action(event), title, event.item_id, event.agent_id))
        for week_item in session.execute(
            select(WeeklyItem).where(*_between(col(WeeklyItem.done_at), start, end), col(WeeklyItem.status) == "done")
        ).scalars():
            assert week_item.done_at is not None
            found.append(
                Activity(week_item.done_at, "weekly", "done", week_item.title, week_item.id, week_item.agent_id)
            )
        for task in session.execute(select(TaskTimer).where(*_between(col(TaskTimer.ended_at), start, end))).scalars():
            assert task.ended_at is not None
            found.append(Activity(task.ended_at, "task", task.status, task.title, task.id, task.agent_id))
        for task in session.execute(
            select(TaskTimer).where(*_between(col(TaskTimer.started_at), start, end))
        ).scalars():
            found.append(Activity(task.started_at, "task", "started", task.title, task.id, task.agent_id))
        for plan in session.execute(select(Plan).where(*_between(col(Plan.created_at), start, end))).scalars():
            found.append(Activity(plan.created_at, "plan", "created", plan.title, plan.id, plan.agent_id))
        for plan in session.execute(select(Plan).where(*_between(col(Plan.validated_at), start, end))).scalars():
            assert plan.validated_at is not None
            found.append(Activity(plan.validated_at, "plan", plan.status, plan.title, plan.id, plan.agent_id))
        checked = session.execute(
            select(PlanItem, col(Plan.title))
            .join(Plan, col(Plan.id) == col(PlanItem.plan_id))
            .where(*_between(col(PlanItem.completed_at), start, end), col(PlanItem.completed).is_(True))
        ).all()
        for item, plan_title in checked:
            assert item.completed_at is not None
            text = f"{plan_title}: {item.text}"
            found.append(Activity(item.completed_at, "plan", "item checked", text, item.plan_id))
        for summary in session.execute(
            select(ConversationSummary).where(*_between(col(ConversationSummary.started_at), start, end))
        ).scalars():
            first = summary.summary.strip().splitlines()[0] if summary.summary.strip() else ""
            title = first[:120] + ("…" if len(first) > 120 else "")
            found.append(Activity(summary.started_at, "session", "summary", title, summary.session_id))
    found.sort(key=lambda a: (a.at, a.source, a.ref or ""))
    return found


@dataclass(frozen=True)
class ToolCalls:
    total: int
    failures: int
    agents: int


def tool_calls(db: Database, start: datetime, end: datetime) -> ToolCalls:
    """Tool outcomes recorded in [start, end) (affective layer), aggregated in the database."""
    table = table_of(AgentFeedback)
    statement = select(
        func.count(),
        func.coalesce(func.sum(case((table.c.outcome == "failure", 1), else_=0)), 0),
        func.count(func.distinct(table.c.agent_id)),
    ).where(table.c.recorded_at >= start, table.c.recorded_at < end)
    with db.read() as session:
        total, failures, agents = session.execute(statement).one()
    return ToolCalls(int(total or 0), int(failures or 0), int(agents or 0))
