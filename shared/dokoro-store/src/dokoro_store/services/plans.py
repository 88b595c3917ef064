"""Procedural memory: plans (reference §2.5, §4.10).

A plan is a row of ``plans`` with its ``plan_items``, so every agent of a store (and a team on
PostgreSQL) shares it. The workspace folder holds renderings written atomically:
``.mcp/plans/<id>.json`` per live plan and ``.mcp/plans/index.json`` (id → title, or
``{title, archived, archive_path}``).

Archiving moves the mirror to ``.mcp/plans/archive/YYYY-MM/<id>.json`` FIRST and then marks
the row, so a crash in between leaves a moved file whose row still looks live. Every read
heals that window: a live row whose mirror is gone but sits in an archive partition is marked
archived before anything else looks at it. Archived plans are read-only.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from dokoro_store import frontmatter
from dokoro_store.clock import Clock, format_duration, iso, slug
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.files import atomic_write_text, file_lock
from dokoro_store.models import Plan, PlanItem
from dokoro_store.paths import StorePaths
from dokoro_store.services.workspace import WorkspaceService

__all__ = [
    "LIST_FILTERS",
    "PLAN_STATUSES",
    "ArchiveOutcome",
    "BlockerAdded",
    "ItemChecked",
    "PlanArchivedError",
    "PlanItemView",
    "PlanService",
    "PlanValidated",
    "PlanView",
    "completion_percentage",
    "plan_files",
    "validation_table",
]

log = logging.getLogger("dokoro.store")

PLAN_STATUSES = ("draft", "active", "completed", "validated", "failed")
LIST_FILTERS = ("all", "active", "completed", "validated")
MAX_ITEMS = 200
MAX_TEXT = 2_000
_TITLE_SLUG_MAX = 40
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MIRROR_LOCK = "plans"


class PlanArchivedError(ConflictError):
    """The plan is archived: it can be read but no longer changed."""


@dataclass(frozen=True)
class PlanFiles:
    """Where the plan mirrors of one workspace folder live."""

    root: Path

    @property
    def index(self) -> Path:
        return self.root / "index.json"

    @property
    def archive(self) -> Path:
        return self.root / "archive"

    def live(self, plan_id: str) -> Path:
        return self.root / f"{_safe_id(plan_id)}.json"

    def archived(self, relative: str) -> Path:
        return self.root / relative

    def find_archived(self, plan_id: str) -> str | None:
        """The ``archive/YYYY-MM/<id>.json`` partition holding a copy of the plan, newest first."""
        name = f"{_safe_id(plan_id)}.json"
        if not self.archive.is_dir():
            return None
        for month in sorted((p for p in self.archive.iterdir() if p.is_dir()), reverse=True):
            if (month / name).is_file():
                return f"archive/{month.name}/{name}"
        return None


def plan_files(paths: StorePaths) -> PlanFiles:
    return PlanFiles(paths.mcp_dir / "plans")


def _safe_id(plan_id: str) -> str:
    # Plan ids become file names: never let one walk out of the plans folder.
    if not _SAFE_ID.match(plan_id):
        raise InvalidArgumentError(f"{plan_id!r} is not a plan id; ids look like plan-2026-06-10-22h23-wednesday-x")
    return plan_id


def completion_percentage(done: int, total: int) -> int:
    """round(100 × done / total), halves rounded up as the reference does; 0 for an empty plan."""
    if total <= 0:
        return 0
    return math.floor(100 * done / total + 0.5)


def _title_slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:_TITLE_SLUG_MAX].strip("-")


@dataclass(frozen=True)
class PlanItemView:
    index: int  # 1-based, as the agent speaks
    text: str
    completed: bool
    created_at: datetime
    completed_at: datetime | None
    notes: str | None
    blockers: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": f"item-{self.index - 1}",
            "text": self.text,
            "completed": self.completed,
            "created_at": iso(self.created_at),
        }
        if self.completed_at is not None:
            data["completed_at"] = iso(self.completed_at)
        if self.notes:
            data["notes"] = self.notes
        if self.blockers:
            data["blockers"] = list(self.blockers)
        return data


@dataclass(frozen=True)
class PlanView:
    id: str
    title: str
    description: str | None
    status: str
    items: tuple[PlanItemView, ...]
    created_at: datetime
    updated_at: datetime
    validated_at: datetime | None
    validation_notes: str | None
    archived_at: datetime | None
    archive_path: str | None
    agent_id: str | None

    @property
    def archived(self) -> bool:
        return self.archive_path is not None

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def done(self) -> int:
        return sum(1 for item in self.items if item.completed)

    @property
    def completion(self) -> int:
        return completion_percentage(self.done, self.total)

    def to_json(self) -> dict[str, Any]:
        """The reference's plan JSON (plus the archive fields once archived)."""
        data: dict[str, Any] = {"id": self.id, "title": self.title}
        if self.description:
            data["description"] = self.description
        data["items"] = [item.to_json() for item in self.items]
        data["created_at"] = iso(self.created_at)
        data["updated_at"] = iso(self.updated_at)
        if self.validated_at is not None:
            data["validated_at"] = iso(self.validated_at)
        if self.validation_notes:
            data["validation_notes"] = self.validation_notes
        data["status"] = self.status
        data["completion_percentage"] = self.completion
        if self.archived:
            data["archived"] = True
            data["archived_at"] = iso(self.archived_at) if self.archived_at else None
            data["archive_path"] = self.archive_path
        return data


@dataclass(frozen=True)
class ItemChecked:
    plan: PlanView
    item: PlanItemView
    unchecked: bool
    reopened: bool
    finished: bool  # this check completed the plan


@dataclass(frozen=True)
class BlockerAdded:
    plan: PlanView
    item: PlanItemView
    blocker: str


@dataclass(frozen=True)
class ArchiveOutcome:
    ok: bool
    plan_id: str
    archive_path: str | None = None
    already: bool = False
    healed: bool = False
    error: str | None = None


@dataclass(frozen=True)
class PlanValidated:
    plan: PlanView
    report_path: Path
    report_relative: str
    table: str
    archive: ArchiveOutcome | None


def _view(row: Plan, items: Sequence[PlanItem]) -> PlanView:
    return PlanView(
        id=row.id,
        title=row.title,
        description=row.description,
        status=row.status,
        items=tuple(
            PlanItemView(
                index=item.position + 1,
                text=item.text,
                completed=item.completed,
                created_at=item.created_at,
                completed_at=item.completed_at,
                notes=item.notes,
                blockers=tuple(item.blockers or ()),
            )
            for item in sorted(items, key=lambda i: i.position)
        ),
        created_at=row.created_at,
        updated_at=row.updated_at,
        validated_at=row.validated_at,
        validation_notes=row.validation_notes,
        archived_at=row.archived_at,
        archive_path=row.archive_path,
        agent_id=row.agent_id,
    )


def _items_of(session: Session, plan_id: str) -> list[PlanItem]:
    return list(session.exec(select(PlanItem).where(PlanItem.plan_id == plan_id).order_by(col(PlanItem.position))))


def _clean(text: str | None, what: str, *, required: bool = False) -> str | None:
    value = (text or "").strip()
    if required and not value:
        raise InvalidArgumentError(f"{what} must not be empty")
    if len(value) > MAX_TEXT:
        raise InvalidArgumentError(f"{what} is {len(value)} characters; keep it under {MAX_TEXT}")
    return value or None


class PlanService:
    """Create, check, block, validate, archive and read the plans of one store."""

    def __init__(self, paths: StorePaths, db: Database, clock: Clock, workspace: WorkspaceService) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._workspace = workspace
        self.files = plan_files(paths)

    # ------------------------------------------------------------------ mirrors
    def _sync_mirrors(self, plan_id: str | None = None) -> None:
        """Rewrite the live mirror of ``plan_id`` (if live) and the index from the committed rows.

        Runs under one folder lock and re-reads the database inside it, so two writers never
        leave an older rendering on top of a newer one. The rows are the truth: a mirror that
        cannot be written is logged, never turned into a failed call.
        """
        try:
            with file_lock(self._paths.locks_dir, _MIRROR_LOCK):
                self._write_index()
                if plan_id is not None:
                    view = self.get(plan_id, heal=False)
                    if view is not None and not view.archived:
                        atomic_write_text(self.files.live(view.id), _dump(view.to_json()))
        except OSError:
            log.warning("dokoro: could not write the plan mirrors under %s", self.files.root, exc_info=True)

    def _write_index(self) -> None:
        with self._db.read() as session:
            rows = list(session.exec(select(Plan).order_by(col(Plan.created_at), col(Plan.id))))
        index: dict[str, Any] = {}
        for row in rows:
            if row.archive_path:
                index[row.id] = {"title": row.title, "archived": True, "archive_path": row.archive_path}
            else:
                index[row.id] = row.title
        atomic_write_text(self.files.index, _dump(index))

    # ------------------------------------------------------------------ reads
    def get(self, plan_id: str, *, heal: bool = True) -> PlanView | None:
        """One plan by id (archived included), or None."""
        plan_id = plan_id.strip()
        with self._db.read() as session:
            row = session.get(Plan, plan_id)
            if row is None:
                return None
            view = _view(row, _items_of(session, plan_id))
        if heal:
            return self._heal(view)
        return view

    def _all(self) -> list[PlanView]:
        """Every plan, newest first (healed)."""
        with self._db.read() as session:
            rows = list(session.exec(select(Plan).order_by(col(Plan.created_at).desc(), col(Plan.id).desc())))
            items: dict[str, list[PlanItem]] = {}
            for item in session.exec(select(PlanItem)):
                items.setdefault(item.plan_id, []).append(item)
        return [self._heal(_view(row, items.get(row.id, []))) for row in rows]

    def _heal(self, view: PlanView) -> PlanView:
        """Finish an archive that moved the mirror but died before marking the row."""
        if view.archived or not _SAFE_ID.match(view.id) or self.files.live(view.id).exists():
            return view
        found = self.files.find_archived(view.id)
        if found is None:
            return view
        outcome = self.archive(view.id)
        if outcome.ok:
            log.warning("dokoro: plan %s was moved to %s but not marked archived; healed", view.id, found)
            healed = self.get(view.id, heal=False)
            if healed is not None:
                return healed
        return view

    def status(self, plan_id: str | None = None) -> PlanView | None:
        """A plan by id, or the newest plan (archived included); None when there are none."""
        if plan_id:
            view = self.get(plan_id)
            if view is None:
                raise NotFoundError(f"No plan with ID {plan_id!r}. List plans with dokoro_plan_list.")
            return view
        plans = self._all()
        return plans[0] if plans else None

    def _resolve(self, plan_id: str | None, statuses: tuple[str, ...], action: str) -> PlanView:
        """The plan a write names, or the newest live plan in one of ``statuses``; never an archived one."""
        if plan_id and plan_id.strip():
            view = self.get(plan_id)
            if view is None:
                raise NotFoundError(f"No plan with ID {plan_id.strip()!r}. List plans with dokoro_plan_list.")
        else:
            live = [p for p in self._all() if not p.archived and p.status in statuses]
            if not live:
                wanted = " or ".join(statuses)
                raise NotFoundError(
                    f"No {wanted} plans to {action}. Create one with dokoro_plan_create, "
                    "or pass planId (see dokoro_plan_list)."
                )
            view = live[0]
        if view.archived:
            raise self._archived_error(view)
        return view

    @staticmethod
    def _archived_error(view: PlanView) -> PlanArchivedError:
        return PlanArchivedError(
            f"Plan {view.id} is archived and read-only at `.mcp/plans/{view.archive_path}`. "
            "Read it with dokoro_plan_status; to continue the work create a new plan with dokoro_plan_create."
        )

    # ------------------------------------------------------------------ writes
    def create(
        self,
        title: str,
        items: Sequence[str],
        description: str | None = None,
        *,
        agent_id: str | None = None,
        status: str = "active",
    ) -> PlanView:
        """A new plan with ``items`` (in order), ``active`` unless ``status`` is ``draft`` (an
        imported plan not started yet); written to the database, then mirrored."""
        if status not in ("draft", "active"):
            raise InvalidArgumentError(f"a new plan is draft or active; got status {status!r}")
        clean_title = _clean(title, "title", required=True)
        assert clean_title is not None
        if not items:
            raise InvalidArgumentError("items must list at least one step of the plan")
        if len(items) > MAX_ITEMS:
            raise InvalidArgumentError(f"a plan holds at most {MAX_ITEMS} items; got {len(items)}. Split it.")
        texts: list[str] = []
        for number, text in enumerate(items, start=1):
            clean = _clean(text, f"item {number}", required=True)
            assert clean is not None
            texts.append(clean)
        clean_description = _clean(description, "description")
        now = self._clock.now()
        title_part = _title_slug(clean_title)
        base = f"plan-{slug(now)}-{title_part}" if title_part else f"plan-{slug(now)}"
        plan_id = self._insert(base, clean_title, clean_description, texts, now, agent_id, status)
        self._sync_mirrors(plan_id)
        numbered = "\n".join(f"   {i}. [ ] {text}" for i, text in enumerate(texts, start=1))
        self._workspace.log_line("📋", f"PLAN CREATED: {clean_title}\n{numbered}")
        view = self.get(plan_id, heal=False)
        assert view is not None
        return view

    def _insert(
        self,
        base: str,
        title: str,
        description: str | None,
        texts: list[str],
        now: datetime,
        agent_id: str | None,
        status: str = "active",
    ) -> str:
        # Two plans with one title in one minute share a base id: number the later ones.
        for attempt in range(20):
            with self._db.read() as session:
                taken = set(session.exec(select(Plan.id).where(col(Plan.id).startswith(base, autoescape=True))))
            plan_id = base
            counter = 2
            while plan_id in taken:
                plan_id = f"{base}-{counter}"
                counter += 1
            try:
                with self._db.write() as session:
                    session.add(
                        Plan(
                            id=plan_id,
                            title=title,
                            description=description,
                            status=status,
                            created_at=now,
                            updated_at=now,
                            agent_id=agent_id,
                        )
                    )
                    session.flush()
                    for position, text in enumerate(texts):
                        session.add(
                            PlanItem(plan_id=plan_id, position=position, text=text, created_at=now, blockers=[])
                        )
            except IntegrityError:
                if attempt == 19:
                    raise
                continue  # another agent took that id in between: pick the next number
            return plan_id
        raise AssertionError("unreachable")  # pragma: no cover

    def _locked(self, session: Session, view: PlanView) -> tuple[Plan, list[PlanItem]]:
        row = session.get(Plan, view.id, with_for_update=True)
        if row is None:
            raise NotFoundError(f"No plan with ID {view.id!r}; it was removed. List plans with dokoro_plan_list.")
        if row.archive_path:
            raise self._archived_error(_view(row, []))
        return row, _items_of(session, view.id)

    @staticmethod
    def _item(items: list[PlanItem], item_index: int) -> PlanItem:
        if not 1 <= item_index <= len(items):
            raise InvalidArgumentError(
                f"Invalid Item: itemIndex {item_index} is out of range. Plan has {len(items)} items "
                f"(itemIndex is 1-based: 1..{len(items)})."
            )
        return items[item_index - 1]

    def check(
        self,
        item_index: int,
        *,
        plan_id: str | None = None,
        notes: str | None = None,
        uncheck: bool = False,
    ) -> ItemChecked:
        """Mark item ``item_index`` (1-based) done, or not done with ``uncheck``.

        Completing the last item completes the plan; unchecking an item of a completed plan
        reopens it (status back to active). The default plan is the newest live active one (or
        active or completed one, for an uncheck).
        """
        clean_notes = _clean(notes, "notes")
        # Unchecking is how a finished plan is reopened, so its default target may be a completed plan.
        target = self._resolve(plan_id, ("active", "completed") if uncheck else ("active",), "check")
        now = self._clock.now()
        reopened = finished = False
        with self._db.write() as session:
            row, items = self._locked(session, target)
            item = self._item(items, item_index)
            was_complete = completion_percentage(sum(i.completed for i in items), len(items)) == 100
            item.completed = not uncheck
            item.completed_at = None if uncheck else now
            if clean_notes is not None:
                item.notes = clean_notes
            session.add(item)
            complete = completion_percentage(sum(i.completed for i in items), len(items)) == 100
            if complete and row.status not in ("completed", "validated"):
                row.status = "completed"
                finished = not was_complete
            elif not complete and row.status == "completed":
                # The reference left a completed plan "completed" after an uncheck (§7.15).
                row.status = "active"
                reopened = True
            row.updated_at = now
            session.add(row)
        self._sync_mirrors(target.id)
        view = self.get(target.id, heal=False)
        assert view is not None
        checked = view.items[item_index - 1]
        note = f"\n   Note: {clean_notes}" if clean_notes else ""
        if uncheck:
            self._workspace.log_line("↩️", f"UNCHECKED: {checked.text}{note}")
        else:
            self._workspace.log_line("✅", f"COMPLETED: {checked.text}{note}")
        return ItemChecked(view, checked, uncheck, reopened, finished)

    def add_blocker(self, item_index: int, blocker: str, *, plan_id: str | None = None) -> BlockerAdded:
        """Record what blocks item ``item_index`` (1-based)."""
        clean = _clean(blocker, "blocker", required=True)
        assert clean is not None
        target = self._resolve(plan_id, ("active",), "block")
        now = self._clock.now()
        with self._db.write() as session:
            row, items = self._locked(session, target)
            item = self._item(items, item_index)
            item.blockers = [*(item.blockers or []), clean]
            session.add(item)
            row.updated_at = now
            session.add(row)
        self._sync_mirrors(target.id)
        view = self.get(target.id, heal=False)
        assert view is not None
        blocked = view.items[item_index - 1]
        self._workspace.log_line("⛔", f'BLOCKER on "{blocked.text}": {clean}')
        return BlockerAdded(view, blocked, clean)

    def validate(
        self,
        *,
        plan_id: str | None = None,
        notes: str | None = None,
        require_complete: bool = False,
    ) -> PlanValidated:
        """Validate a plan: write the report to daily/, and archive it when validated.

        Status becomes ``validated`` when complete, ``failed`` when incomplete and
        ``require_complete``, else ``validated``.
        """
        clean_notes = _clean(notes, "notes")
        target = self._resolve(plan_id, ("active", "completed"), "validate")
        now = self._clock.now()
        with self._db.write() as session:
            row, items = self._locked(session, target)
            complete = completion_percentage(sum(i.completed for i in items), len(items)) == 100
            row.status = "failed" if require_complete and not complete else "validated"
            row.validated_at = now
            row.validation_notes = clean_notes
            row.updated_at = now
            session.add(row)
        self._sync_mirrors(target.id)
        view = self.get(target.id, heal=False)
        assert view is not None
        table = validation_table(view, now)
        report = self._write_report(view, table, now)
        relative = self._paths.relative(report)
        result = f"{view.status.upper()} ({view.completion}%)"
        self._workspace.log_line("🏁", f"PLAN VALIDATED: {view.title}\n   Result: {result}\n   Report: {relative}")
        outcome = self.archive(view.id) if view.status == "validated" else None
        final = self.get(view.id, heal=False) or view
        return PlanValidated(final, report, relative, table, outcome)

    def _write_report(self, view: PlanView, table: str, now: datetime) -> Path:
        front = {
            "title": f"Plan Validation: {view.title}",
            "date": iso(now),
            "plan_id": view.id,
            "status": view.status,
            "completion": view.completion,
            "tags": {"type": "validation", "result": view.status},
        }
        path = self._paths.daily_dir / f"{slug(now)}-validation-{_safe_id(view.id)}.md"
        atomic_write_text(path, frontmatter.render(front) + table + "\n")
        return path

    # ------------------------------------------------------------------ archive
    def archive(self, plan_id: str) -> ArchiveOutcome:
        """Move a plan's mirror to ``archive/<YYYY-MM of now>/`` and mark it archived (read-only).

        Idempotent; heals a half-done archive; never raises for an expected failure (the
        outcome says what went wrong).
        """
        plan_id = plan_id.strip()
        if not _SAFE_ID.match(plan_id):
            return ArchiveOutcome(False, plan_id, error=f"{plan_id!r} is not a plan id")
        now = self._clock.now()
        try:
            with file_lock(self._paths.locks_dir, _MIRROR_LOCK):
                outcome = self._archive_locked(plan_id, now)
                if outcome.ok and not outcome.already:
                    self._write_index()
                return outcome
        except OSError as exc:
            return ArchiveOutcome(False, plan_id, error=f"could not move the plan file: {exc}")

    def _archive_locked(self, plan_id: str, now: datetime) -> ArchiveOutcome:
        live = self.files.live(plan_id)
        with self._db.write() as session:
            row = session.get(Plan, plan_id, with_for_update=True)
            if row is None:
                return ArchiveOutcome(False, plan_id, error=f"No plan with ID {plan_id!r}")
            if row.archive_path:
                target = self.files.archived(row.archive_path)
                if not target.exists():
                    atomic_write_text(target, _dump(_view(row, _items_of(session, plan_id)).to_json()))
                return ArchiveOutcome(True, plan_id, row.archive_path, already=True)
            found = None if live.exists() else self.files.find_archived(plan_id)
            relative = found or f"archive/{now:%Y-%m}/{plan_id}.json"
            row.archived_at = now
            row.archive_path = relative
            row.updated_at = now
            session.add(row)
            if found is None:
                # The final rendering goes to the live mirror, then the file moves FIRST; the row is
                # marked by the commit that follows. A crash in between is healed by the next read.
                view = _view(row, _items_of(session, plan_id))
                target = self.files.archived(relative)
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(live, _dump(view.to_json()))
                live.replace(target)
        return ArchiveOutcome(True, plan_id, relative, healed=found is not None)

    def archive_candidates(self, cutoff: datetime) -> list[PlanView]:
        """Live completed or validated plans last changed before ``cutoff`` (for the sweep)."""
        return [
            plan
            for plan in self._all()
            if not plan.archived and plan.status in ("completed", "validated") and plan.updated_at < cutoff
        ]

    # Last: the name shadows the builtin inside the class body.
    def list(self, status: str = "all") -> list[PlanView]:
        """Live plans newest first, then archived ones newest first; ``status`` filters."""
        if status not in LIST_FILTERS:
            raise InvalidArgumentError(f"status must be one of {', '.join(LIST_FILTERS)}; got {status!r}")
        plans = [p for p in self._all() if status == "all" or p.status == status]
        return [p for p in plans if not p.archived] + [p for p in plans if p.archived]


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _minutes(start: datetime, end: datetime | None) -> str:
    if end is None:
        return "-"
    return format_duration(round((end - start).total_seconds() / 60))


def validation_table(view: PlanView, now: datetime) -> str:
    """The validation report body: header, item table, summary and notes."""
    validated = view.validated_at or now
    lines = [
        f"# Plan Validation: {view.title}",
        "",
        f"- **Plan:** {view.id}",
        f"- **Status:** {view.status.upper()}",
        f"- **Completion:** {view.completion}% ({view.done}/{view.total})",
        f"- **Created:** {iso(view.created_at)}",
        f"- **Validated:** {iso(validated)}",
        f"- **Total duration:** {_minutes(view.created_at, validated)}",
        "",
        "| # | Task | Status | Completed At | Duration |",
        "|---|------|--------|--------------|----------|",
    ]
    for item in view.items:
        text = item.text if len(item.text) <= 40 else item.text[:40] + "..."
        text = text.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {item.index} | {text} | {'✅' if item.completed else '❌'} | "
            f"{iso(item.completed_at) if item.completed_at else '-'} | {_minutes(item.created_at, item.completed_at)} |"
        )
    lines += ["", "## Summary", "", f"- Completed: {view.done}/{view.total}"]
    pending = [item for item in view.items if not item.completed]
    if pending:
        lines.append("- Pending:")
        for item in pending:
            lines.append(f"  - {item.index}. {item.text}")
            lines += [f"    - ⛔ {blocker}" for blocker in item.blockers]
    if view.validation_notes:
        lines += ["", "## Notes", "", view.validation_notes]
    return "\n".join(lines)
