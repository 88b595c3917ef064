"""Procedural memory: plans (reference §2.5, §4.10).

A plan is a row of ``plans`` with its ``plan_items``, so every agent of a store (and a team on
PostgreSQL) shares it. The workspace folder holds renderings written atomically
(:mod:`.plan_files`): ``.mcp/plans/<id>.json`` per live plan and ``.mcp/plans/index.json``.

Archiving (:mod:`.plan_archive`) moves the mirror to ``.mcp/plans/archive/YYYY-MM/<id>.json``
FIRST and then marks the row, so a crash in between leaves a moved file whose row still looks
live. Every read heals that window: a live row whose mirror is gone but sits in an archive
partition is marked archived before anything else looks at it. Archived plans are read-only.

Ownership: a plan records its creator. Other known agents may read it and add blockers, but
check, uncheck and validate it only when it is shared (created with ``shared=True``, created
with no identity, or written before plans had owners); see :mod:`dokoro_store.walls.ownership`.

Reads return :class:`~.plan_views.PlanView` (what the store, the sweep and the planning helpers
need); writes return the public results of :mod:`dokoro_store.results.plans`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session, col, select

from dokoro_store.clock import Clock, slug
from dokoro_store.db.engine import Database
from dokoro_store.db.ids import take_id
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError, NotOwnerError
from dokoro_store.models import Plan as PlanRow
from dokoro_store.models import PlanItem as PlanItemRow
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.plans.archive import ArchiveOutcome, PlanArchiver
from dokoro_store.procedural.plans.files import MIRROR_LOCK, PlanFiles, dump_json, is_plan_id, plan_files
from dokoro_store.procedural.plans.report import validation_table, write_report
from dokoro_store.procedural.plans.rules import (
    LIST_FILTERS,
    MAX_ITEMS,
    NEXT_STATUS,
    PLAN_STATUSES,
    PlanArchivedError,
    PlanValidated,
    _clean,
    _title_slug,
    others_plans,
)
from dokoro_store.procedural.plans.views import PlanItemView, PlanView, completion_percentage, items_of, view_of
from dokoro_store.results.plans import Plan, PlanBlockerAdded, PlanItemChecked
from dokoro_store.walls.files import atomic_write_text, file_lock
from dokoro_store.walls.ownership import known_agent, owned_by_another
from dokoro_store.working.current.file import CurrentFile

__all__ = [
    "LIST_FILTERS",
    "NEXT_STATUS",
    "PLAN_STATUSES",
    "ArchiveOutcome",
    "PlanArchivedError",
    "PlanFiles",
    "PlanItemView",
    "PlanService",
    "PlanValidated",
    "PlanView",
    "completion_percentage",
    "plan_files",
    "validation_table",
]

log = logging.getLogger("dokoro.store")


class PlanService:
    """Create, check, block, validate, archive and read the plans of one store."""

    def __init__(self, paths: StorePaths, db: Database, clock: Clock, current: CurrentFile) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._current = current
        self.files = plan_files(paths)
        self._archiver = PlanArchiver(paths, db, clock, self.files)

    # ------------------------------------------------------------------ mirrors
    def _sync_mirrors(self, plan_id: str | None = None) -> None:
        """Rewrite the live mirror of ``plan_id`` (if live) and the index from the committed rows.

        Runs under one folder lock and re-reads the database inside it, so two writers never
        leave an older rendering on top of a newer one. The rows are the truth: a mirror that
        cannot be written is logged, never turned into a failed call.
        """
        try:
            with file_lock(self._paths.locks_dir, MIRROR_LOCK, within=self._paths.root):
                self.files.write_index(self._db)
                if plan_id is not None:
                    view = self.get(plan_id, heal=False)
                    if view is not None and not view.archived:
                        atomic_write_text(self.files.live(view.id), dump_json(view.to_json()), within=self._paths.root)
        except OSError:
            log.warning("dokoro: could not write the plan mirrors under %s", self.files.root, exc_info=True)

    # ------------------------------------------------------------------ reads
    def get(self, plan_id: str, *, heal: bool = True) -> PlanView | None:
        """One plan by id (archived included), or None."""
        plan_id = plan_id.strip()
        with self._db.read() as session:
            row = session.get(PlanRow, plan_id)
            if row is None:
                return None
            view = view_of(row, items_of(session, plan_id))
        if heal:
            return self._heal(view)
        return view

    def _all(self) -> list[PlanView]:
        """Every plan, newest first (healed)."""
        with self._db.read() as session:
            newest_first = select(PlanRow).order_by(col(PlanRow.created_at).desc(), col(PlanRow.id).desc())
            rows = list(session.exec(newest_first))
            items: dict[str, list[PlanItemRow]] = {}
            for item in session.exec(select(PlanItemRow)):
                items.setdefault(item.plan_id, []).append(item)
        return [self._heal(view_of(row, items.get(row.id, []))) for row in rows]

    def _heal(self, view: PlanView) -> PlanView:
        """Finish an archive that moved the mirror but died before marking the row."""
        if view.archived or not is_plan_id(view.id) or self.files.live(view.id).exists():
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

    @staticmethod
    def may_change(view: PlanView, agent: str | None) -> bool:
        """Whether ``agent`` may check, uncheck and validate ``view`` (its own, shared, or no identity)."""
        return view.shared or not owned_by_another(view.agent_id, agent)

    def _resolve(
        self, plan_id: str | None, statuses: tuple[str, ...], action: str, agent: str | None = None, *, owned: bool
    ) -> PlanView:
        """The plan a write names, or the newest live plan in one of ``statuses``; never an archived one.

        With ``owned``, a plan ``agent`` may not change is refused when named, skipped when chosen
        by default.
        """
        if plan_id and plan_id.strip():
            view = self.get(plan_id)
            if view is None:
                raise NotFoundError(f"No plan with ID {plan_id.strip()!r}. List plans with dokoro_plan_list.")
            if owned and not self.may_change(view, agent):
                raise NotOwnerError(
                    f"Plan {view.id} belongs to {view.agent_id} and is not shared; you ({agent}) may read it "
                    f"(dokoro_plan_status) and add blockers (dokoro_plan_blocker), not {action} it. Ask "
                    f"{view.agent_id} to {action} it, or create your own plan with dokoro_plan_create."
                )
        else:
            candidates = [p for p in self._all() if not p.archived and p.status in statuses]
            live = [p for p in candidates if not owned or self.may_change(p, agent)]
            if not live and candidates:
                # The plans in flight are others' and not shared: say whose, rather than "none".
                raise NotOwnerError(others_plans(candidates, action, agent))
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
        shared: bool = False,
    ) -> Plan:
        """A new plan with ``items`` (in order), ``active`` unless ``status`` is ``draft`` (an
        imported plan not started yet); written to the database, then mirrored.

        ``agent_id`` is its creator; only the creator checks and validates it unless ``shared``
        (a plan created with no identity is shared).
        """
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
        owner = known_agent(agent_id)
        plan_id = self._insert(
            base, clean_title, clean_description, texts, now, agent_id, status, shared=shared or owner is None
        )
        self._sync_mirrors(plan_id)
        numbered = "\n".join(f"   {i}. [ ] {text}" for i, text in enumerate(texts, start=1))
        self._current.log_line("📋", f"PLAN CREATED: {clean_title}\n{numbered}", agent=agent_id)
        view = self.get(plan_id, heal=False)
        assert view is not None
        return view.result()

    def _insert(
        self,
        base: str,
        title: str,
        description: str | None,
        texts: list[str],
        now: datetime,
        agent_id: str | None,
        status: str = "active",
        *,
        shared: bool = True,
    ) -> str:
        # Two plans with one title in one minute share a base id: the later ones are numbered.
        with self._db.write() as session:
            plan_id = take_id(session, self._db.ops, col(PlanRow.id), base).id
            session.add(
                PlanRow(
                    id=plan_id,
                    title=title,
                    description=description,
                    status=status,
                    created_at=now,
                    updated_at=now,
                    agent_id=agent_id,
                    shared=shared,
                )
            )
            session.flush()
            for position, text in enumerate(texts):
                session.add(PlanItemRow(plan_id=plan_id, position=position, text=text, created_at=now, blockers=[]))
        return plan_id

    def _locked(self, session: Session, view: PlanView) -> tuple[PlanRow, list[PlanItemRow]]:
        row = session.get(PlanRow, view.id, with_for_update=True)
        if row is None:
            raise NotFoundError(f"No plan with ID {view.id!r}; it was removed. List plans with dokoro_plan_list.")
        if row.archive_path:
            raise self._archived_error(view_of(row, []))
        return row, items_of(session, view.id)

    @staticmethod
    def _item(items: list[PlanItemRow], item_index: int) -> PlanItemRow:
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
        agent: str | None = None,
    ) -> PlanItemChecked:
        """Mark item ``item_index`` (1-based) done, or not done with ``uncheck``; ``agent`` (who
        calls) must own the plan or the plan be shared.

        Completing the last item completes the plan; unchecking an item of a completed plan
        reopens it (status back to active). The default plan is the newest live active one (or
        active or completed one, for an uncheck).
        """
        clean_notes = _clean(notes, "notes")
        # Unchecking is how a finished plan is reopened, so its default target may be a completed plan.
        target = self._resolve(plan_id, ("active", "completed") if uncheck else ("active",), "check", agent, owned=True)
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
        plan = view.result()
        checked = plan.items[item_index - 1]
        note = f"\n   Note: {clean_notes}" if clean_notes else ""
        if uncheck:
            self._current.log_line("↩️", f"UNCHECKED: {checked.text}{note}", agent=agent)
        else:
            self._current.log_line("✅", f"COMPLETED: {checked.text}{note}", agent=agent)
        return PlanItemChecked(plan=plan, item=checked, unchecked=uncheck, reopened=reopened, finished=finished)

    def add_blocker(
        self, item_index: int, blocker: str, *, plan_id: str | None = None, agent: str | None = None
    ) -> PlanBlockerAdded:
        """Record what blocks item ``item_index`` (1-based). Any agent may report a blocker on any
        live plan: it adds to the plan and changes no one's progress."""
        clean = _clean(blocker, "blocker", required=True)
        assert clean is not None
        target = self._resolve(plan_id, ("active",), "block", agent, owned=False)
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
        plan = view.result()
        blocked = plan.items[item_index - 1]
        self._current.log_line("⛔", f'BLOCKER on "{blocked.text}": {clean}', agent=agent)
        return PlanBlockerAdded(plan=plan, item=blocked, blocker=clean)

    def validate(
        self,
        *,
        plan_id: str | None = None,
        notes: str | None = None,
        require_complete: bool = False,
        agent: str | None = None,
    ) -> PlanValidated:
        """Validate a plan: write the report to daily/, and archive it when validated.

        Status becomes ``validated`` when complete, ``failed`` when incomplete and
        ``require_complete``, else ``validated``.
        """
        clean_notes = _clean(notes, "notes")
        target = self._resolve(plan_id, ("active", "completed"), "validate", agent, owned=True)
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
        report = write_report(self._paths, view, table, now)
        relative = self._paths.relative(report)
        result = f"{view.status.upper()} ({view.completion}%)"
        self._current.log_line(
            "🏁", f"PLAN VALIDATED: {view.title}\n   Result: {result}\n   Report: {relative}", agent=agent
        )
        outcome = self.archive(view.id) if view.status == "validated" else None
        final = self.get(view.id, heal=False) or view
        return PlanValidated(final, report, relative, table, outcome)

    # ------------------------------------------------------------------ archive
    def archive(self, plan_id: str) -> ArchiveOutcome:
        """Archive a plan now (idempotent; see :class:`~.plan_archive.PlanArchiver`)."""
        return self._archiver.archive(plan_id)

    def archive_candidates(self, cutoff: datetime) -> list[PlanView]:
        """Live completed or validated plans last changed before ``cutoff`` (for the sweep)."""
        return [
            plan
            for plan in self._all()
            if not plan.archived and plan.status in ("completed", "validated") and plan.updated_at < cutoff
        ]

    # ------------------------------------------------------------------ by hand (dokoro browse)
    def advance(self, plan_id: str, expected: str) -> PlanView:
        """Move a live plan one step along draft → active → completed, as a person does in the TUI.

        ``expected`` is the status the person saw: if the plan changed since, nothing is written.
        """
        to = NEXT_STATUS.get(expected)
        if to is None:
            raise InvalidArgumentError(f"no step forward from {expected!r}: only draft → active → completed")
        with self._db.write() as session:
            row = session.get(PlanRow, plan_id.strip(), with_for_update=True)
            if row is None:
                raise NotFoundError(f"No plan with ID {plan_id.strip()!r}. List plans with dokoro_plan_list.")
            if row.archive_path:
                raise self._archived_error(view_of(row, []))
            if row.status != expected:
                raise ConflictError(f"plan {row.id} is {row.status} now, not {expected}; nothing changed")
            row.status = to
            row.updated_at = self._clock.now()
            session.add(row)
        self._sync_mirrors(row.id)
        view = self.get(row.id, heal=False)
        assert view is not None
        return view

    def unarchive(self, plan_id: str) -> PlanView:
        """Undo an archive: the plan is live (and writable) again, its mirror back in ``.mcp/plans/``.

        The live mirror is written before the row changes and the archived copy goes last, so a crash
        leaves either an archived plan (retry) or a live one, never a plan the next read re-archives.
        """
        view = self.get(plan_id, heal=False)
        if view is None:
            raise NotFoundError(f"No plan with ID {plan_id.strip()!r}. List plans with dokoro_plan_list.")
        if not view.archived or view.archive_path is None:
            return view
        archived = self.files.archived(view.archive_path)
        with file_lock(self._paths.locks_dir, MIRROR_LOCK, within=self._paths.root):
            live = self.files.live(view.id)
            if live.exists():
                raise ConflictError(f"{live} already exists; move it away before restoring plan {view.id}")
            restored = dataclasses.replace(view, archived_at=None, archive_path=None)
            atomic_write_text(live, dump_json(restored.to_json()), within=self._paths.root)
            with self._db.write() as session:
                row = session.get(PlanRow, view.id, with_for_update=True)
                if row is not None:
                    row.archive_path = None
                    row.archived_at = None
                    row.updated_at = self._clock.now()
                    session.add(row)
            archived.unlink(missing_ok=True)
            self.files.write_index(self._db)
        again = self.get(view.id, heal=False)
        assert again is not None
        return again

    # Last: the name shadows the builtin inside the class body.
    def list(self, status: str = "all") -> list[PlanView]:
        """Live plans newest first, then archived ones newest first; ``status`` filters."""
        if status not in LIST_FILTERS:
            raise InvalidArgumentError(f"status must be one of {', '.join(LIST_FILTERS)}; got {status!r}")
        plans = [p for p in self._all() if status == "all" or p.status == status]
        return [p for p in plans if not p.archived] + [p for p in plans if p.archived]
