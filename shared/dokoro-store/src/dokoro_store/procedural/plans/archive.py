"""Archiving a plan: its mirror moves to ``.mcp/plans/archive/YYYY-MM/`` and the row is marked.

The mirror moves FIRST and then the row is marked, so a crash in between leaves a moved file
whose row still looks live; :class:`~dokoro_store.procedural.plans.service.PlanService` heals that window
on every read (it archives again, which finds the moved file and only marks the row).
Archived plans are read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models import Plan as PlanRow
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.plans.files import MIRROR_LOCK, PlanFiles, dump_json, is_plan_id
from dokoro_store.procedural.plans.views import items_of, view_of
from dokoro_store.walls.files import atomic_write_text, file_lock

__all__ = ["ArchiveOutcome", "PlanArchiver"]


@dataclass(frozen=True)
class ArchiveOutcome:
    ok: bool
    plan_id: str
    archive_path: str | None = None
    already: bool = False
    healed: bool = False
    error: str | None = None


class PlanArchiver:
    """Archive the plans of one store (idempotent; heals a half-done archive)."""

    def __init__(self, paths: StorePaths, db: Database, clock: Clock, files: PlanFiles) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._files = files

    def archive(self, plan_id: str) -> ArchiveOutcome:
        """Move a plan's mirror to ``archive/<YYYY-MM of now>/`` and mark it archived (read-only).

        Never raises for an expected failure: the outcome says what went wrong.
        """
        plan_id = plan_id.strip()
        if not is_plan_id(plan_id):
            return ArchiveOutcome(False, plan_id, error=f"{plan_id!r} is not a plan id")
        now = self._clock.now()
        try:
            with file_lock(self._paths.locks_dir, MIRROR_LOCK, within=self._paths.root):
                outcome = self._archive_locked(plan_id, now)
                if outcome.ok and not outcome.already:
                    self._files.write_index(self._db)
                return outcome
        except OSError as exc:
            return ArchiveOutcome(False, plan_id, error=f"could not move the plan file: {exc}")

    def _archive_locked(self, plan_id: str, now: datetime) -> ArchiveOutcome:
        live = self._files.live(plan_id)
        with self._db.write() as session:
            row = session.get(PlanRow, plan_id, with_for_update=True)
            if row is None:
                return ArchiveOutcome(False, plan_id, error=f"No plan with ID {plan_id!r}")
            if row.archive_path:
                target = self._files.archived(row.archive_path)
                if not target.exists():
                    atomic_write_text(
                        target, dump_json(view_of(row, items_of(session, plan_id)).to_json()), within=self._paths.root
                    )
                return ArchiveOutcome(True, plan_id, row.archive_path, already=True)
            found = None if live.exists() else self._files.find_archived(plan_id)
            relative = found or f"archive/{now:%Y-%m}/{plan_id}.json"
            row.archived_at = now
            row.archive_path = relative
            row.updated_at = now
            session.add(row)
            if found is None:
                # The final rendering goes to the live mirror, then the file moves FIRST; the row is
                # marked by the commit that follows. A crash in between is healed by the next read.
                view = view_of(row, items_of(session, plan_id))
                target = self._files.archived(relative)
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(live, dump_json(view.to_json()), within=self._paths.root)
                live.replace(target)
        return ArchiveOutcome(True, plan_id, relative, healed=found is not None)
