"""The archive sweep: old daily files to ``archive/daily/YYYY-Www/``, old finished plans archived
(reference §2.9, §4.9).

One sweep at a time per workspace folder: the singleton lock ``.mcp/archive.lock``
(:mod:`.archive_lock`) holds ``{pid, started_at, owner}`` and a lock older than :data:`LOCK_TTL`
is a crashed sweep's, taken over. A daily file is never moved while it is in the current ISO week or while a live file
claim holds it; plans are archived through :class:`~dokoro_store.procedural.plans.service.PlanService`.
Per-file failures are collected, never abort the sweep, and a sweep never raises.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from sqlalchemy import update
from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.clock import Clock, iso, iso_week_dir
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError, InvalidArgumentError, OutsideStoreError
from dokoro_store.models import Doc
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.archive.lock import LOCK_TTL, SweepLock
from dokoro_store.procedural.plans.service import PlanService
from dokoro_store.results.archive import ArchiveSweep, Held, Moved, SweepError
from dokoro_store.walls.containment import scan
from dokoro_store.walls.files import atomic_write_text, read_text_or_none

__all__ = [
    "DAILY_OLDER_THAN_DAYS",
    "LOCK_TTL",
    "PLAN_OLDER_THAN_DAYS",
    "ArchiveService",
    "ClaimCheck",
    "DailyOutcome",
    "Held",
    "Moved",
    "SweepError",
    "SweepResult",
    "SweepStatus",
]

log = logging.getLogger("dokoro.store")

DAILY_OLDER_THAN_DAYS = 7
PLAN_OLDER_THAN_DAYS = 30
DISPLAY_CAP = 20

# Does a live (unreleased, unexpired) file claim hold ``path``? Claims are keyed relative to
# ``root`` (the claim root, the server's cwd by default). Raising means "cannot tell".
ClaimCheck = Callable[[Path, Path], bool]

_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True)
class SweepResult:
    """A sweep, with what only its caller needs (a top-level error, whether it did any work)."""

    dry_run: bool
    skipped: str | None = None  # "locked" when another sweep holds the lock
    moved_daily: tuple[Moved, ...] = ()
    archived_plans: tuple[str, ...] = ()
    held: tuple[Held, ...] = ()
    errors: tuple[SweepError, ...] = ()
    error: str | None = None  # a top-level failure

    @property
    def last_error(self) -> str | None:
        if self.error:
            return self.error
        return f"{self.errors[-1].path}: {self.errors[-1].error}" if self.errors else None

    @property
    def did_work(self) -> bool:
        return bool(self.moved_daily or self.archived_plans)

    def result(self) -> ArchiveSweep:
        return ArchiveSweep(
            dry_run=self.dry_run,
            skipped=self.skipped,
            moved_daily=self.moved_daily,
            archived_plans=self.archived_plans,
            held=self.held,
            errors=self.errors,
            last_error=self.last_error,
        )


@dataclass(frozen=True)
class SweepStatus:
    """What ``.mcp/archive-status.json`` says about the last real sweep."""

    last_run: str
    moved_daily: int
    archived_plans: int
    errors: tuple[SweepError, ...] = ()
    last_error: str | None = None

    def result(self) -> ArchiveSweep:
        """The status as the sweep tool returns it (``status_only``; the counts are for its message)."""
        return ArchiveSweep(status_only=True, errors=self.errors, last_run=self.last_run, last_error=self.last_error)


@dataclass(frozen=True)
class DailyOutcome:
    """What :meth:`ArchiveService.archive_daily_file` did with one file."""

    outcome: str  # moved | alreadyArchived | claimed | currentWeek | missing | failed | restored | occupied
    target: str | None = None
    error: str | None = None


@dataclass
class _Run:
    moved: list[Moved] = field(default_factory=list)
    plans: list[str] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)
    errors: list[SweepError] = field(default_factory=list)


def _file_date(name: str) -> date | None:
    match = _DATED.match(name)
    if match is None:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:
        return None


class ArchiveService:
    """Sweep one workspace folder; see the module docstring for the rules."""

    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        plans: PlanService,
        claims: ClaimCheck | None = None,
    ) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._plans = plans
        self.claims = claims
        self._lock = SweepLock(paths, clock)

    # ------------------------------------------------------------------ paths
    @property
    def lock_path(self) -> Path:
        return self._lock.path

    @property
    def status_path(self) -> Path:
        return self._paths.mcp_dir / "archive-status.json"

    @property
    def daily_archive(self) -> Path:
        return self._paths.root / "archive" / "daily"

    def _claim_root(self, claim_root: Path | None) -> Path:
        # The reference keys claims relative to the server's cwd; a store's folder usually sits
        # in the project it belongs to, so its parent is the stand-in when no cwd is known.
        return (claim_root or self._paths.root.parent).resolve()

    # ------------------------------------------------------------------ sweep
    def sweep(
        self,
        *,
        older_than_days: int = DAILY_OLDER_THAN_DAYS,
        plan_older_than_days: int = PLAN_OLDER_THAN_DAYS,
        dry_run: bool = False,
        claim_root: Path | None = None,
    ) -> SweepResult:
        """Move old daily files and archive old finished plans; never raises.

        A dry run takes the lock too and reports what it would do, moving nothing.
        """
        if older_than_days < 0 or plan_older_than_days < 0:
            raise InvalidArgumentError("olderThanDays and planOlderThanDays must be 0 or more")
        try:
            owner = self._lock.acquire()
        except OSError as exc:
            return SweepResult(dry_run, error=f"could not take the sweep lock {self.lock_path}: {exc}")
        if owner is None:
            return SweepResult(dry_run, skipped="locked")
        run = _Run()
        top_error: str | None = None
        try:
            now = self._clock.now()
            self._sweep_daily(run, now, older_than_days, dry_run, self._claim_root(claim_root))
            self._sweep_plans(run, now, plan_older_than_days, dry_run)
        except (OSError, SQLAlchemyError, DokoroError) as exc:
            log.warning("dokoro: archive sweep failed", exc_info=True)
            top_error = str(exc) or type(exc).__name__
        finally:
            with contextlib.suppress(OSError):
                self._lock.release(owner)
        result = SweepResult(
            dry_run,
            moved_daily=tuple(run.moved),
            archived_plans=tuple(run.plans),
            held=tuple(run.held),
            errors=tuple(run.errors),
            error=top_error,
        )
        if not dry_run:
            self._write_status(result)
        return result

    def _sweep_daily(self, run: _Run, now: datetime, older_than_days: int, dry_run: bool, root: Path) -> None:
        daily = self._paths.daily_dir
        if not daily.is_dir():
            return
        cutoff = now - timedelta(days=older_than_days)
        this_week = now.date().isocalendar()[:2]
        # Top-level files only; symlinks are skipped with a warning, never moved (dokoro_store.walls.containment).
        for path in scan(self._paths.root, daily, skip_dir=lambda _name: True):
            day = _file_date(path.name)
            if day is None or datetime(day.year, day.month, day.day, tzinfo=UTC) >= cutoff:
                continue
            relative = self._paths.relative(path)
            if day.isocalendar()[:2] == this_week:
                run.held.append(Held(path=relative, reason="current_week"))
                continue
            try:
                claimed = self._is_claimed(path, root)
            except (OSError, SQLAlchemyError, DokoroError) as exc:
                run.errors.append(SweepError(path=relative, error=f"could not check file claims, left in place: {exc}"))
                continue
            if claimed:
                run.held.append(Held(path=relative, reason="claimed"))
                continue
            target = self.daily_archive / iso_week_dir(day) / path.name
            if dry_run:
                run.moved.append(Moved(source=relative, target=self._paths.relative(target)))
                continue
            try:
                moved_to = self._move(path, target)
            except (OSError, DokoroError) as exc:
                run.errors.append(SweepError(path=relative, error=f"could not move: {exc}"))
                continue
            run.moved.append(Moved(source=relative, target=self._paths.relative(moved_to)))
        if not dry_run and run.moved:
            error = self._repoint_docs(run.moved)
            if error:
                run.errors += [SweepError(path=m.source, error=error) for m in run.moved]

    def _is_claimed(self, path: Path, root: Path) -> bool:
        return self.claims is not None and self.claims(path.resolve(), root)

    def _move(self, source: Path, target: Path) -> Path:
        """Move ``source`` to ``target`` (never over a different file); the path it landed at.

        Both stay inside the store: a symlinked source is not moved, and no folder on the way to
        the target may lead out (:mod:`dokoro_store.walls.containment`).
        """
        if source.is_symlink():
            raise OutsideStoreError(f"{source} is a symlink; the archive moves only plain files")
        self._paths.inside(source, what="archived file")
        self._paths.inside(target.parent, what="archive folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        self._paths.inside(target.parent, what="archive folder")
        counter = 2
        while target.is_symlink() or target.exists():
            if not target.is_symlink() and target.read_bytes() == source.read_bytes():
                source.unlink()  # already archived by an earlier, interrupted run
                return target
            target = target.with_name(f"{source.stem}-{counter}{source.suffix}")
            counter += 1
        shutil.move(source, target)  # a rename, or copy + unlink across devices
        return target

    def _repoint_docs(self, moved: list[Moved]) -> str | None:
        """Session dumps indexed as documents follow their files into the archive (one transaction)."""
        try:
            with self._db.write() as session:
                for one in moved:
                    session.execute(
                        update(Doc).where(Doc.filepath == one.source).values(filepath=one.target)  # type: ignore[arg-type]
                    )
        except (SQLAlchemyError, DokoroError) as exc:
            return f"moved, but its document row still points at the old path: {exc}"
        return None

    def _sweep_plans(self, run: _Run, now: datetime, plan_older_than_days: int, dry_run: bool) -> None:
        cutoff = now - timedelta(days=plan_older_than_days)
        for plan in self._plans.archive_candidates(cutoff):
            if dry_run:
                run.plans.append(plan.id)
                continue
            outcome = self._plans.archive(plan.id)
            if outcome.ok:
                run.plans.append(plan.id)
            else:
                failed = outcome.error or "archive failed"
                run.errors.append(SweepError(path=f".mcp/plans/{plan.id}.json", error=failed))

    # ------------------------------------------------------------------ status file
    def _write_status(self, result: SweepResult) -> None:
        data = {
            "last_run": iso(self._clock.now()),
            "moved_daily": len(result.moved_daily),
            "archived_plans": len(result.archived_plans),
            "errors": [{"path": e.path, "error": e.error} for e in result.errors],
            "last_error": result.last_error,
        }
        try:
            atomic_write_text(
                self.status_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", within=self._paths.root
            )
        except OSError:
            log.warning("dokoro: could not write %s", self.status_path, exc_info=True)

    def status(self) -> SweepStatus | None:
        """The last real sweep's status, or None when no sweep has run (or the file is unreadable)."""
        text = read_text_or_none(self.status_path, within=self._paths.root)
        if text is None:
            return None
        try:
            data = json.loads(text)
            return SweepStatus(
                last_run=str(data["last_run"]),
                moved_daily=int(data.get("moved_daily", 0)),
                archived_plans=int(data.get("archived_plans", 0)),
                errors=tuple(SweepError(path=str(e["path"]), error=str(e["error"])) for e in data.get("errors") or []),
                last_error=data.get("last_error"),
            )
        except (ValueError, KeyError, TypeError):
            return None

    # ------------------------------------------------------------------ opportunistic sweep
    def after_claim(self, claim_root: Path | None = None) -> str | None:
        """The sweep a workspace claim runs (defaults, not dry): a line for the claim's message.

        Says something only when files moved or errors happened; silent when locked or idle.
        It must never fail the claim that triggered it.
        """
        try:
            result = self.sweep(claim_root=claim_root)
        except Exception as exc:  # the claim already succeeded; a sweep bug must not undo that
            log.exception("dokoro: the opportunistic archive sweep failed")
            return f"⚠ sweep error: {exc}"
        if result.error:
            return f"⚠ sweep error: {result.error}"
        notes: list[str] = []
        if result.did_work:
            notes.append(
                f"🧹 archived {len(result.moved_daily)} old daily file(s) "
                f"and {len(result.archived_plans)} finished plan(s)"
            )
        if result.errors:
            notes.append(f"⚠ sweep hit {len(result.errors)} file error(s)")
        return "; ".join(notes) or None

    # ------------------------------------------------------------------ one file (TUI)
    def archive_daily_file(self, name: str, *, force: bool = False, claim_root: Path | None = None) -> DailyOutcome:
        """Archive one ``daily/`` file now, whatever its age.

        Without ``force`` a current-week or live-claimed file stays (a failed claim check does
        not stop it, as in the reference).
        """
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise InvalidArgumentError(f"{name!r} is not a file name in daily/")
        day = _file_date(name)
        source = self._paths.daily_dir / name
        week = iso_week_dir(day) if day else "undated"
        target = self.daily_archive / week / name
        if not source.exists():
            return DailyOutcome("alreadyArchived" if target.exists() else "missing", self._paths.relative(target))
        if not force:
            if day is not None and day.isocalendar()[:2] == self._clock.now().date().isocalendar()[:2]:
                return DailyOutcome("currentWeek")
            try:
                if self._is_claimed(source, self._claim_root(claim_root)):
                    return DailyOutcome("claimed")
            except (OSError, SQLAlchemyError, DokoroError):
                log.warning("dokoro: claim check failed for %s; archiving anyway", source, exc_info=True)
        try:
            moved_to = self._move(source, target)
        except (OSError, DokoroError) as exc:
            return DailyOutcome("failed", error=str(exc))
        moved = Moved(source=self._paths.relative(self._paths.daily_dir / name), target=self._paths.relative(moved_to))
        self._repoint_docs([moved])
        return DailyOutcome("moved", moved.target)

    def unarchive_daily_file(self, archived: str) -> DailyOutcome:
        """Undo :meth:`archive_daily_file`: move ``archive/daily/<week>/<name>`` back to ``daily/<name>``.

        Outcomes: ``restored`` | ``missing`` (the archived file is gone) | ``occupied`` (``daily/`` has
        a file of that name again; nothing is overwritten) | ``failed``.
        """
        source = self._paths.inside(self._paths.root / archived, what="archived file")
        archive_root = self.daily_archive.resolve()
        if not source.is_relative_to(archive_root) or source.suffix != ".md":
            raise InvalidArgumentError(f"{archived!r} is not a file under archive/daily/")
        target = self._paths.daily_dir / source.name
        self._paths.inside(target.parent, what="daily folder")
        if not source.is_file():
            return DailyOutcome("missing")
        if target.exists():
            return DailyOutcome("occupied", self._paths.relative(target))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(source, target)
        except OSError as exc:
            return DailyOutcome("failed", error=str(exc))
        self._repoint_docs([Moved(source=self._paths.relative(source), target=self._paths.relative(target))])
        return DailyOutcome("restored", self._paths.relative(target))
