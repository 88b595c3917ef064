"""The tracking layer (``store.tracking``): issues, features, the week's items, task timers, upkeep.

Every call that touches renderings runs one locked pass: hand edits of the renderings are read
back into the rows first (see :mod:`.renderings`), then the call changes its rows, then every
rendering that is missing or stale is written. Task timers have no rendering and take no folder
lock: they are rows locked per agent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, DokoroError, InvalidArgumentError
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.tracking.desks import UpkeepDesk, WeekDesk
from dokoro_store.procedural.tracking.documents import TrackingDocuments
from dokoro_store.procedural.tracking.items import Change, ItemService, view_of
from dokoro_store.procedural.tracking.markdown import item_path, plan_slug
from dokoro_store.procedural.tracking.plan_text import APPROACHES, Source, plan_markdown
from dokoro_store.procedural.tracking.renderings import Pass, RenderKeeper
from dokoro_store.procedural.tracking.rules import (
    CATEGORIES,
    COMPLEXITIES,
    PRIORITIES,
    STATUSES,
    feature_base_id,
    issue_base_id,
    one_of,
)
from dokoro_store.procedural.tracking.tasks import TaskService, task_view
from dokoro_store.procedural.tracking.upkeep import TrackingBackups
from dokoro_store.procedural.tracking.weekly import WEEK_FILE, WeeklyService
from dokoro_store.results.tracking import ItemChanged, ItemList, TaskList, TaskTracked
from dokoro_store.walls.files import read_text_or_none

if TYPE_CHECKING:
    from dokoro_store.models.tracking import TrackingItem
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["TrackingService"]

log = logging.getLogger("dokoro.store")

MAX_LIST = 200
# A feature planned less than this ago is not planned again: agents racing to plan it get its plan.
REPLAN_WINDOW = timedelta(minutes=1)


class TrackingService:
    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        *,
        session_id: Callable[[], str | None] = lambda: None,
        log_line: Callable[..., bool] | None = None,  # CurrentFile.log_line(icon, text, agent=...)
        search: SearchService | None = None,
        docs: DocumentService | None = None,
    ) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._session_id = session_id
        self._log_line = log_line
        self._search = search  # store.search (hybrid search), for plans citing stored research
        self.items = ItemService(db, clock)
        self.keeper = RenderKeeper(paths, clock, self.items)
        self.weekly = WeeklyService(paths, db, clock, self.keeper)
        self.tasks = TaskService(db)
        self.backups = TrackingBackups(paths, db, clock)
        self.week = WeekDesk(self.weekly, self.tasks, self.renderings)
        self.upkeep = UpkeepDesk(self.items, self.keeper, self.weekly, self.backups, self.renderings)
        self._documents = TrackingDocuments(db, self.items, docs) if docs is not None else None

    # ------------------------------------------------------------------ the pass
    @contextmanager
    def renderings(self, agent_id: str | None, own: set[str] | None = None, *, write: bool = True) -> Iterator[Pass]:
        """Reconcile hand edits, run the body, then (``write``) render what is missing or stale and,
        once the folder is released, index what was rendered (:mod:`.documents`)."""
        with self.keeper.locked() as current:
            self.keeper.reconcile(current, agent_id)
            self.weekly.reconcile(current, agent_id)
            yield current
            if write:
                self.keeper.render(current, frozenset(own or ()))
                current.week_written = self.weekly.render(current)
        if write:
            self._index(current)

    def _index(self, current: Pass) -> None:
        """The documents of the items (and week) this pass rendered, and of a batch of items that
        have none yet; a failure is logged, never the call's (the rows and renderings are written)."""
        if self._documents is None:
            return
        try:
            items = current.written_items + self._documents.undocumented()
            week = None
            if current.week_written:
                text = read_text_or_none(self.keeper.abs(WEEK_FILE), within=self._paths.root)
                week = (self.weekly.this_week(), text) if text else None
            if items or week:
                self._documents.write(items, week)
        except (DokoroError, SQLAlchemyError, OSError):
            log.warning("dokoro: tracking items could not be indexed now (the next call retries)", exc_info=True)

    def refresh(self, agent_id: str | None = None) -> Pass:
        """One pass with no change of its own: hand edits read back, renderings brought up to date."""
        with self.renderings(agent_id) as current:
            pass
        return current

    def _changed(self, change: Change, action: str, current: Pass, plan_path: str | None = None) -> ItemChanged:
        item = self.items.get(change.item.id) or change.item
        events = self.items.events([item.id])[item.id]
        return ItemChanged(
            action=action,
            previous_status=change.previous,
            item=view_of(item, events),
            path=item_path(item),
            plan_path=plan_path,
            redacted=list(change.redacted),
            reconciled=list(current.notes),
        )

    # ------------------------------------------------------------------ issues
    def add_issue(
        self,
        title: str,
        category: str = "bug",
        priority: str = "medium",
        estimate: str = "1h",
        description: str | None = None,
        *,
        agent_id: str | None = None,
    ) -> ItemChanged:
        category = one_of(category, CATEGORIES, "category")
        priority = one_of(priority, PRIORITIES, "priority")
        own: set[str] = set()
        with self.renderings(agent_id, own) as current:
            change = self.items.add(
                "issue",
                issue_base_id(self._clock.now()),
                title=title,
                priority=priority,
                estimate=estimate,
                description=description,
                category=category,
                agent_id=agent_id,
                session_id=self._session_id(),
            )
            own.add(change.item.id)
        return self._changed(change, "added", current)

    def work_issue(self, issue_id: str, *, agent_id: str | None = None) -> ItemChanged:
        return self._move("issue", issue_id, "active", agent_id=agent_id)

    def complete_issue(self, issue_id: str, solution: str, *, agent_id: str | None = None) -> ItemChanged:
        from dokoro_store.procedural.tracking.rules import clean_text, clean_texts

        text = clean_text(solution, "solution", required=True)
        (safe,), kinds = clean_texts(text)
        return self._move("issue", issue_id, "resolved", agent_id=agent_id, values={"solution": safe}, redacted=kinds)

    def _move(
        self,
        kind: str,
        given: str,
        target: str,
        *,
        agent_id: str | None,
        values: dict[str, Any] | None = None,
        redacted: tuple[str, ...] = (),
    ) -> ItemChanged:
        own: set[str] = set()
        with self.renderings(agent_id, own) as current:
            item = self.items.resolve(given, kind)
            verb = {"active": "start work", "resolved": "resolve", "planned": "plan"}.get(target, target)
            action = {"active": "started", "resolved": "resolved", "planned": "planned"}.get(target, target)
            if item.status in ("resolved", "completed") and target == "active":
                action = "reopened"
            change = self.items.transition(item.id, target, verb=verb, action=action, agent_id=agent_id, values=values)
            own.add(item.id)
        result = self._changed(Change(change.item, change.previous, redacted), action, current)
        return result

    def list_items(self, kind: str, status: str = "all", priority: str = "all", limit: int = 20) -> ItemList:
        if status != "all":
            one_of(status, STATUSES[kind], "status")
        if priority != "all":
            one_of(priority, PRIORITIES, "priority")
        if not 1 <= limit <= MAX_LIST:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIST}; got {limit}")
        with self.renderings(None) as current:
            pass
        rows, matching, counts = self.items.listing(kind, status, priority, limit)
        events = self.items.events([r.id for r in rows])
        return ItemList(
            kind=kind,
            status=status,
            priority=priority,
            limit=limit,
            matching=matching,
            counts=counts,
            items=[view_of(r, events[r.id]) for r in rows],
            reconciled=list(current.notes),
        )

    # ------------------------------------------------------------------ features
    def add_feature(
        self,
        title: str,
        complexity: str = "moderate",
        priority: str = "medium",
        estimate: str = "1d",
        description: str | None = None,
        *,
        agent_id: str | None = None,
    ) -> ItemChanged:
        complexity = one_of(complexity, COMPLEXITIES, "complexity")
        priority = one_of(priority, PRIORITIES, "priority")
        own: set[str] = set()
        with self.renderings(agent_id, own) as current:
            change = self.items.add(
                "feature",
                feature_base_id(self._clock.now()),
                title=title,
                priority=priority,
                estimate=estimate,
                description=description,
                complexity=complexity,
                agent_id=agent_id,
                session_id=self._session_id(),
            )
            own.add(change.item.id)
        return self._changed(change, "added", current)

    def start_feature(self, feature_id: str, *, agent_id: str | None = None) -> ItemChanged:
        return self._move("feature", feature_id, "active", agent_id=agent_id)

    def plan_feature(self, feature_id: str, approach: str = "plan_only", *, agent_id: str | None = None) -> ItemChanged:
        """Write a plan for a feature and move it to planned. A feature planned less than
        :data:`REPLAN_WINDOW` ago (agents planning it at once, or a retry) gets no second plan: the
        answer is the plan it has (``already planned``), so no plan file is left that nothing links.
        Planning again later writes a new plan; the earlier one stays as a document of features/."""
        approach = one_of(approach, APPROACHES, "approach")
        own: set[str] = set()
        with self.renderings(agent_id, own) as current:
            item = self.items.resolve(feature_id, "feature")
            now = self._clock.now()
            if (recent := self._planned_moments_ago(item, now)) is not None:
                return recent.model_copy(update={"reconciled": list(current.notes)})
            sources, note = (
                self._research(item.title, item.description) if approach == "use_existing_research" else ([], None)
            )
            text = plan_markdown(item, approach, now, sources, note)
            path = f"features/{now:%Y%m%d-%H%M%S}-{plan_slug(item.title)}-implementation-plan.md"
            action = "replanned" if item.status == "planned" else "planned"
            try:
                change = self.items.transition(
                    item.id,
                    "planned",
                    verb="plan",
                    action=action,
                    agent_id=agent_id,
                    note=path,
                    values={"plan_path": path, "plan_approach": approach, "plan_markdown": text},
                    # Planned meanwhile from another folder on the team database: that plan counts.
                    expected_version=item.version,
                )
            except ConflictError:
                fresh = self.items.get(item.id)
                if fresh is None or (recent := self._planned_moments_ago(fresh, now)) is None:
                    raise
                return recent
            if item.plan_path and item.plan_path != path:
                # The earlier plan stays where it is, as an ordinary document of features/.
                current.cache.pop(item.plan_path, None)
                current.note(
                    item.plan_path, "kept", "the earlier plan stays in place; the feature now links the new one"
                )
            own.add(item.id)
        return self._changed(change, action, current, plan_path=path)

    def _planned_moments_ago(self, item: TrackingItem, now: datetime) -> ItemChanged | None:
        """The answer for a feature planned less than :data:`REPLAN_WINDOW` ago (its plan), or None."""
        if item.status != "planned" or not item.plan_path or now - item.updated_at >= REPLAN_WINDOW:
            return None
        events = self.items.events([item.id])[item.id]
        return ItemChanged(
            action="already planned",
            previous_status=item.status,
            item=view_of(item, events),
            path=item_path(item),
            plan_path=item.plan_path,
        )

    def _research(self, title: str, description: str | None) -> tuple[list[Source], str | None]:
        if self._search is None:
            return [], "hybrid search is not available in this store"
        query = f"{title} {description or ''}".strip()
        try:
            self._search.refresh()
            found = self._search.universal(query, limit=5)
        except (DokoroError, SQLAlchemyError, OSError) as exc:
            log.warning("dokoro: research search for a feature plan failed", exc_info=True)
            return [], f"searching stored research failed: {exc}"
        sources = [
            Source(h.doc_id, h.title, h.filepath, h.why) for h in found.hits if not h.filepath.startswith("tracking/")
        ]
        return sources, "; ".join(found.notes) or None

    # ------------------------------------------------------------------ tasks
    def track_task(
        self,
        action: str,
        agent_id: str,
        *,
        title: str | None = None,
        reason: str | None = None,
        task_id: str | None = None,
    ) -> TaskTracked:
        change = self.tasks.track(action, agent_id, title=title, reason=reason, task_id=task_id)
        task = change.task
        icons = {"start": "▶️", "pause": "⏸️", "resume": "⏯️", "iterate": "🔁", "complete": "✅", "abandon": "🗑️"}
        logged = False
        if self._log_line is not None:
            try:
                # Left out of current.md when another agent holds the workspace (ownership).
                logged = self._log_line(
                    icons[action], f"TASK {action.upper()}: {task.title} ({task.id})", agent=agent_id
                )
            except OSError:
                log.warning("dokoro: could not log the task change to current.md", exc_info=True)
        return TaskTracked(
            action=action,
            agent_id=task.agent_id,
            task=task_view(task, change.at),
            auto_paused=task_view(change.auto_paused, change.at) if change.auto_paused else None,
            at=change.at,
            logged=logged,
            redacted=list(change.redacted),
        )

    def list_tasks(self, agent_id: str) -> TaskList:
        rows, at = self.tasks.of_agent(agent_id)
        views = [task_view(row, at) for row in rows]
        by = {
            status: [v for v in views if v.status == status]
            for status in ("active", "paused", "completed", "abandoned")
        }
        return TaskList(
            agent_id=agent_id,
            at=at,
            active=by["active"],
            paused=by["paused"],
            completed=by["completed"],
            abandoned=by["abandoned"],
            total_active_seconds=round(sum(v.active_seconds for v in views), 3),
        )
