"""The week's tools and the upkeep tools, on top of the rows and the rendering pass.

``store.tracking.week``: add an item, sync from current.md, the week's status.
``store.tracking.upkeep``: verify (and back up), restore, health check.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, time, timedelta

from dokoro_store.procedural.tracking.items import ItemService
from dokoro_store.procedural.tracking.renderings import CONFLICTS, Pass, RenderKeeper
from dokoro_store.procedural.tracking.rules import PRIORITIES, STATUSES, one_of, title_key
from dokoro_store.procedural.tracking.tasks import TaskService, task_view
from dokoro_store.procedural.tracking.upkeep import TrackingBackups
from dokoro_store.procedural.tracking.week_file import parse_outside, split_section
from dokoro_store.procedural.tracking.weekly import WEEK_FILE, WeeklyService, counts, week_days, weekly_view
from dokoro_store.results.tracking import (
    BackupVerify,
    HealthProblem,
    HealthReport,
    RestoreReport,
    WeeklyAdded,
    WeeklyStatus,
    WeeklySync,
    WeekOutside,
    WeekTime,
)
from dokoro_store.walls import containment as walls
from dokoro_store.walls.files import read_text_or_none

__all__ = ["UpkeepDesk", "WeekDesk"]

Renderings = Callable[..., AbstractContextManager[Pass]]
WEEK_TYPES = ("issue", "feature", "task")


class WeekDesk:
    def __init__(self, weekly: WeeklyService, tasks: TaskService, renderings: Renderings) -> None:
        self._weekly = weekly
        self._tasks = tasks
        self._renderings = renderings

    def add_item(
        self,
        type: str,
        title: str,
        priority: str = "medium",
        effort: str | None = None,
        item_id: str | None = None,
        *,
        agent_id: str | None = None,
    ) -> WeeklyAdded:
        kind = one_of(type, WEEK_TYPES, "type")
        priority = one_of(priority, PRIORITIES, "priority")
        with self._renderings(agent_id) as current:
            added = self._weekly.add(kind, title, priority, effort, item_id, agent_id=agent_id)
        return WeeklyAdded(
            created=added.created,
            item=weekly_view(self._weekly.get(added.item.id) or added.item),
            path=WEEK_FILE,
            redacted=list(added.redacted),
            reconciled=list(current.notes),
        )

    def sync(self, dry_run: bool = False, *, agent_id: str | None = None) -> WeeklySync:
        week = self._weekly.this_week()
        with self._renderings(agent_id, write=not dry_run) as current:
            found = self._weekly.candidates()
            added, already = [], []
            listed = {row.title_key for row in self._weekly.items(week) if row.status != "dropped"}
            for candidate in found:
                if title_key(candidate.title) in listed:
                    already.append(candidate.title)
                    continue
                if dry_run:
                    continue
                result = self._weekly.add(
                    candidate.type, candidate.title, candidate.priority, agent_id=agent_id, source="sync"
                )
                listed.add(result.item.title_key)
                added.append(weekly_view(result.item))
        notes = [] if found else ["current.md has no unchecked `- [ ]` items under a Progress or Active Task heading"]
        return WeeklySync(
            dry_run=dry_run,
            week=week,
            found=found,
            added=added,
            already_listed=already,
            notes=notes,
            reconciled=list(current.notes),
        )

    def status(
        self, include_time: bool = False, include_summary: bool = True, *, agent_id: str | None = None
    ) -> WeeklyStatus:
        week = self._weekly.this_week()
        with self._renderings(agent_id) as current:
            pass
        items = [row for row in self._weekly.items(week) if row.status != "dropped"]
        carried = self._weekly.carried(week)
        monday, sunday = week_days(week)
        outside_text = self._weekly.outside()
        outside = None
        if outside_text is not None:
            title, boxes, checked, headed = parse_outside(outside_text)
            outside = WeekOutside(title=title, checkboxes=boxes, checked=checked, headed_items=headed)
        spent = None
        if include_time:
            start = datetime.combine(monday, time(), UTC)
            tasks, at = self._tasks.between(start, start + timedelta(days=7))
            per_agent: dict[str, float] = {}
            for task in tasks:
                view = task_view(task, at)
                per_agent[task.agent_id] = round(per_agent.get(task.agent_id, 0.0) + view.active_seconds, 3)
            spent = WeekTime(
                total_seconds=round(sum(per_agent.values()), 3),
                per_agent_seconds=per_agent,
                tasks_completed=len([t for t in tasks if t.status == "completed"]),
            )
        by_status = counts(items, "status")
        summary = None
        if include_summary:
            done = by_status.get("done", 0)
            share = f" ({round(100 * done / len(items))}%)" if items else ""
            types = ", ".join(f"{n} {t}{'s' if n != 1 else ''}" for t, n in sorted(counts(items, "type").items()))
            summary = f"{done} of {len(items)} items done{share}" + (f"; {types}" if types else "")
            if carried:
                summary += f"; {len(carried)} open item(s) carried over from earlier weeks"
        return WeeklyStatus(
            week=week,
            start=monday.isoformat(),
            end=sunday.isoformat(),
            items=[weekly_view(row) for row in items],
            carried_over=[weekly_view(row) for row in carried],
            counts=by_status,
            by_type=counts(items, "type"),
            outside=outside,
            time=spent,
            summary=summary,
            reconciled=list(current.notes),
        )


class UpkeepDesk:
    def __init__(
        self,
        items: ItemService,
        keeper: RenderKeeper,
        weekly: WeeklyService,
        backups: TrackingBackups,
        renderings: Renderings,
    ) -> None:
        self._items = items
        self._keeper = keeper
        self._weekly = weekly
        self._backups = backups
        self._renderings = renderings

    def _item_counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {kind: dict.fromkeys(statuses, 0) for kind, statuses in STATUSES.items()}
        for row in self._items.all():
            out[row.kind][row.status] = out[row.kind].get(row.status, 0) + 1
        return out

    def verify(self, create_backup: bool = False, *, agent_id: str | None = None) -> BackupVerify:
        with self._renderings(agent_id) as current:
            pass
        created = self._backups.create() if create_backup else None
        latest = self._backups.latest()
        return BackupVerify(
            rows=self._backups.counts(),
            items=self._item_counts(),
            renderings_checked=len(current.cache),
            rerendered=list(current.rerendered),
            changed_last_24h=self._backups.changed_since(24),
            created=created,
            latest=self._backups.info(*latest) if latest else None,
            reconciled=list(current.notes),
        )

    def restore(
        self,
        type: str = "all",
        source: str = "auto",
        dry_run: bool = True,
        *,
        agent_id: str | None = None,
    ) -> RestoreReport:
        kind = one_of(type, ("all", "issues", "features"), "type")
        origin = one_of(source, ("backup", "auto"), "source")
        with self._renderings(agent_id, write=not dry_run) as current:
            plan = self._backups.plan_restore(kind, origin)
            items = plan.items if dry_run else self._backups.apply(plan)
        notes = []
        if plan.source is None:
            notes.append("no backup under tracking/backups/: only renderings were checked (source=auto)")
        elif not items:
            notes.append("nothing to restore: every row of the backup is here, equal or newer")
        if dry_run and items:
            notes.append("dry run: nothing was written; call again with dry_run=false to restore these rows")
        return RestoreReport(
            dry_run=dry_run,
            source=self._backups.relative(plan.source) if plan.source else None,
            kind=kind,
            items=items,
            identical=plan.identical,
            newer_here=plan.newer_here,
            rerendered=list(current.rerendered),
            notes=notes,
        )

    def health(self, fix_issues: bool = False, *, agent_id: str | None = None) -> HealthReport:
        problems: list[HealthProblem] = []
        in_use = bool(self._items.versions()) or self._keeper.abs("tracking").is_dir()
        for rel in self._keeper.missing_dirs() if in_use else []:
            if fix_issues:
                self._keeper.abs(rel).mkdir(parents=True, exist_ok=True)
            problems.append(
                HealthProblem(kind="missing_dir", path=rel, detail="required folder is missing", fixed=fix_issues)
            )
        with self._renderings(agent_id, write=fix_issues) as current:
            stale = self._keeper.check(current)
            week_missing = self._week_missing()
        for kind, rel, detail in stale:
            problems.append(HealthProblem(kind=kind, path=rel, detail=detail, fixed=fix_issues))
        if week_missing:
            problems.append(
                HealthProblem(
                    kind="week_section_missing",
                    path=WEEK_FILE,
                    detail="the week has items but currentWeek.md has no tracking section",
                    fixed=fix_issues,
                )
            )
        for rel in current.unknown:
            problems.append(
                HealthProblem(
                    kind="unknown_file", path=rel, detail="not the rendering of any item; left alone", fixed=False
                )
            )
        for rel in current.duplicates:
            problems.append(
                HealthProblem(
                    kind="duplicate_file",
                    path=rel,
                    detail="a second copy of an item's rendering; left alone",
                    fixed=False,
                )
            )
        conflicts = self._keeper.abs(CONFLICTS)
        if conflicts.is_dir():
            for path in walls.scan(self._keeper.abs(""), conflicts, skip_dir=lambda _name: True):
                problems.append(
                    HealthProblem(
                        kind="conflict_copy",
                        path=f"{CONFLICTS}/{path.name}",
                        detail="text dokoro could not read back; merge what you need by hand, then delete it",
                        fixed=False,
                    )
                )
        return HealthReport(
            healthy=all(p.fixed for p in problems),
            fix_issues=fix_issues,
            dirs_checked=len(self._keeper.required_dirs()),
            renderings_checked=len(current.cache),
            rows=self._backups.counts(),
            problems=problems,
            reconciled=list(current.notes),
        )

    def _week_missing(self) -> bool:
        week = self._weekly.this_week()
        if not self._weekly.items(week) and not self._weekly.carried(week):
            return False
        path = self._keeper.abs(WEEK_FILE)
        text = read_text_or_none(path, within=self._keeper.abs(""), errors="replace")
        if text is None:
            return True
        return split_section(text) is None
