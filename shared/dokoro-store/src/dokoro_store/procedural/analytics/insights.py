"""Velocity, timeline and pending work, answered from the rows of every layer and the store's
markdown documents (reference §2.17).

The original counted markdown files by modification time: a ``git checkout`` or an editor's
save made a week look busy. Here each figure counts facts the store recorded when they happened
(see :mod:`.activity`), and says which; the markdown an agent or a person wrote (a daily dump, a
note with a "TODO:") is read as the documents the store keeps of it (:mod:`.documents`), dated
when the store first saw each text and when it saw it change.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from sqlalchemy import and_, or_
from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import Plan, PlanItem, TrackingItem, WeeklyItem
from dokoro_store.procedural.analytics.activity import Activity, collect, tool_calls
from dokoro_store.procedural.analytics.documents import pending_marks, written
from dokoro_store.procedural.tracking.tasks import TaskService
from dokoro_store.results.analytics import DayCount, Figure, Pending, PendingItem, Timeline, TimelineEntry, Velocity

__all__ = ["PERIODS", "RANGES", "STALENESS", "Insights"]

PERIODS = {"day": 1, "week": 7, "month": 30}
RANGES = {"week": 7, "month": 30, "quarter": 90, "all": None}
STALENESS = {"all": 0, "stale": 7, "very_stale": 14}
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_OPEN = {"issue": ("pending", "active"), "feature": ("ideas", "planned", "active")}


def _count(found: list[Activity], source: str, action: str) -> int:
    return sum(1 for a in found if a.source == source and a.action == action)


def _folders(documents: list[Activity], action: str) -> str:
    """How many documents per top-level folder, e.g. ``daily 2, insights 1`` (``none``)."""
    folders = Counter((a.ref or "").split("/", 1)[0] for a in documents if a.action == action)
    return ", ".join(f"{folder} {n}" for folder, n in sorted(folders.items())) or "none"


class Insights:
    def __init__(self, db: Database, clock: Clock, tasks: TaskService) -> None:
        self._db = db
        self._clock = clock
        self._tasks = tasks

    # ------------------------------------------------------------------ velocity
    def velocity(self, period: str = "week") -> Velocity:
        if period not in PERIODS:
            raise InvalidArgumentError(f"period must be one of {', '.join(PERIODS)}; got {period!r}")
        days = PERIODS[period]
        end = self._clock.now()
        start = end - timedelta(days=days)
        # The period ends now, inclusive: what happened at this very instant counts.
        found = collect(self._db, start, end + timedelta(microseconds=1))
        tracked = sum(
            self._task_seconds(a.ref) for a in found if a.source == "task" and a.action == "completed" and a.ref
        )
        calls = tool_calls(self._db, start, end + timedelta(microseconds=1))
        sessions = {a.ref for a in found if a.source == "session" and a.ref}
        documents = written(self._db, start, end + timedelta(microseconds=1))
        figures = [
            Figure(name="issues opened", value=_count(found, "issue", "added"), counts="issues added (tracking rows)"),
            Figure(name="issues resolved", value=_count(found, "issue", "resolved"), counts="issues moved to resolved"),
            Figure(name="features added", value=_count(found, "feature", "added"), counts="features added"),
            Figure(
                name="features started", value=_count(found, "feature", "started"), counts="features moved to active"
            ),
            Figure(
                name="features completed",
                value=_count(found, "feature", "completed"),
                counts="features moved to completed",
            ),
            Figure(name="weekly items done", value=_count(found, "weekly", "done"), counts="week items ticked off"),
            Figure(name="tasks completed", value=_count(found, "task", "completed"), counts="task timers completed"),
            Figure(
                name="tracked hours",
                value=round(tracked / 3600, 2),
                counts="active time of the task timers completed in the period (database clock)",
            ),
            Figure(name="plans created", value=_count(found, "plan", "created"), counts="plans created (procedural)"),
            Figure(
                name="plan items checked", value=_count(found, "plan", "item checked"), counts="plan items checked off"
            ),
            Figure(
                name="session summaries",
                value=_count(found, "session", "summary"),
                counts=f"episodic summaries written ({len(sessions)} distinct session ids)",
            ),
            Figure(
                name="documents written",
                value=_count(documents, "document", "written"),
                counts="markdown documents first seen in the period (daily dumps, notes, decisions, insights, "
                f"plans): {_folders(documents, 'written')}",
            ),
            Figure(
                name="documents updated",
                value=_count(documents, "document", "updated"),
                counts=f"markdown documents written before and changed in the period: {_folders(documents, 'updated')}",
            ),
            Figure(name="tool calls", value=calls.total, counts=f"tool outcomes recorded by {calls.agents} agent(s)"),
            Figure(
                name="tool success rate",
                value=round(100 * (calls.total - calls.failures) / calls.total, 1) if calls.total else 0.0,
                counts=f"percent of recorded tool calls that did not fail ({calls.failures} failed)",
            ),
        ]
        per_day: dict[str, Counter[str]] = {}
        for activity in found:
            if activity.completion:
                per_day.setdefault(activity.at.date().isoformat(), Counter())[activity.source] += 1
        by_day = [DayCount(date=d, completed=sum(c.values()), by_kind=dict(c)) for d, c in sorted(per_day.items())]
        completed = sum(d.completed for d in by_day)
        best = max(by_day, key=lambda d: (d.completed, d.date), default=None)
        most = None
        if best is not None:
            weekday = _WEEKDAYS[datetime.fromisoformat(best.date).weekday()]
            most = f"{weekday} {best.date} ({best.completed} completed)"
        return Velocity(
            period=period,
            days=days,
            start=start,
            end=end,
            figures=figures,
            completed=completed,
            average_per_day=round(completed / days, 2),
            by_day=by_day,
            most_productive_day=most,
        )

    def _task_seconds(self, task_id: str) -> float:
        from dokoro_store.models import TaskTimer

        with self._db.read() as session:
            task = session.get(TaskTimer, task_id)
        return task.active_seconds if task is not None else 0.0

    # ------------------------------------------------------------------ timeline
    def timeline(self, range_: str = "month") -> Timeline:
        if range_ not in RANGES:
            raise InvalidArgumentError(f"range must be one of {', '.join(RANGES)}; got {range_!r}")
        end = self._clock.now()
        days = RANGES[range_]
        start = end - timedelta(days=days) if days is not None else None
        found = collect(self._db, start, end + timedelta(microseconds=1))
        found += written(self._db, start, end + timedelta(microseconds=1))
        found.sort(key=lambda a: (a.at, a.source, a.ref or ""))
        entries = [
            TimelineEntry(
                at=a.at,
                date=a.at.date().isoformat(),
                source=a.source,
                action=a.action,
                title=a.title,
                ref=a.ref,
                agent_id=a.agent_id,
            )
            for a in found
        ]
        return Timeline(
            range=range_, start=start, end=end, entries=entries, counts=dict(Counter(a.source for a in found))
        )

    # ------------------------------------------------------------------ pending
    def pending(self, staleness: str = "all") -> Pending:
        if staleness not in STALENESS:
            raise InvalidArgumentError(f"staleness must be one of {', '.join(STALENESS)}; got {staleness!r}")
        min_age = STALENESS[staleness]
        now = self._clock.now()
        items: list[PendingItem] = []

        def add(
            source: str, ident: str, title: str, status: str, updated: datetime, agent: str | None, detail: str | None
        ) -> None:
            age = round(max(0.0, (now - updated).total_seconds()) / 86400, 1)
            if age >= min_age:
                items.append(
                    PendingItem(
                        source=source,
                        id=ident,
                        title=title,
                        status=status,
                        updated_at=updated,
                        age_days=age,
                        agent_id=agent,
                        detail=detail,
                    )
                )

        with self._db.read() as session:
            open_rows = or_(
                *(
                    and_(col(TrackingItem.kind) == kind, col(TrackingItem.status).in_(states))
                    for kind, states in _OPEN.items()
                )
            )
            for row in session.exec(select(TrackingItem).where(open_rows)):
                if row.status in _OPEN.get(row.kind, ()):
                    add(
                        row.kind,
                        row.id,
                        row.title,
                        row.status,
                        row.updated_at,
                        row.agent_id,
                        f"{row.priority} priority",
                    )
            for week_item in session.exec(select(WeeklyItem).where(col(WeeklyItem.status) == "open")):
                add(
                    "weekly",
                    week_item.id,
                    week_item.title,
                    "open",
                    week_item.updated_at,
                    week_item.agent_id,
                    week_item.week,
                )
            plans = list(
                session.exec(select(Plan).where(col(Plan.status) == "active", col(Plan.archived_at).is_(None)))
            )
            for plan in plans:
                open_items = session.exec(
                    select(PlanItem.text).where(col(PlanItem.plan_id) == plan.id, col(PlanItem.completed).is_(False))
                ).all()
                if open_items:
                    detail = f"{len(open_items)} unchecked item(s), next: {open_items[0]}"
                    add("plan", plan.id, plan.title, plan.status, plan.updated_at, plan.agent_id, detail)
        for doc in pending_marks(self._db, now - timedelta(days=min_age)):
            detail = f"{doc.open_marks} pending mark(s): " + " | ".join(doc.lines)
            add("document", doc.filepath, doc.title, "marked pending", doc.updated_at, None, detail)
        tasks, at = self._tasks.open_tasks()
        for task in tasks:
            updated = task.updated_at
            # Task times are on the database clock: age them against it, not this process's clock.
            age = round(max(0.0, (at - updated).total_seconds()) / 86400, 1)
            if age >= min_age:
                items.append(
                    PendingItem(
                        source="task",
                        id=task.id,
                        title=task.title,
                        status=task.status,
                        updated_at=updated,
                        age_days=age,
                        agent_id=task.agent_id,
                        detail=f"{task.iterations} iteration(s)",
                    )
                )
        items.sort(key=lambda i: (-i.age_days, i.source, i.id))
        return Pending(
            staleness=staleness,
            min_age_days=min_age,
            at=now,
            items=items,
            counts=dict(Counter(i.source for i in items)),
            counted=(
                "open tracking rows: issues pending or active, features in ideas, planned or active, open week items, "
                "active or paused task timers of every agent, and active plans with unchecked items; and the markdown "
                "documents (daily/, insights/, decisions/, ...) whose lines still say todo, in progress or pending, or "
                "carry 🚧 or 📋; age = days since the row or document last changed"
            ),
        )
