"""Results of the archive sweep: what moved, what stayed and why, what failed."""

from __future__ import annotations

from dokoro_store.results.base import Result

__all__ = ["ArchiveSweep", "Held", "Moved", "SweepError"]


class Moved(Result):
    source: str  # relative to the workspace folder
    target: str


class Held(Result):
    """A daily file old enough to move that the sweep left alone, and why."""

    path: str
    reason: str  # "current_week" | "claimed"


class SweepError(Result):
    path: str
    error: str


class ArchiveSweep(Result):
    """A sweep's outcome, or (status_only) what the last real sweep recorded."""

    status_only: bool = False
    dry_run: bool = False
    skipped: str | None = None  # "locked" when another sweep held the lock
    moved_daily: tuple[Moved, ...] = ()
    archived_plans: tuple[str, ...] = ()
    held: tuple[Held, ...] = ()
    errors: tuple[SweepError, ...] = ()
    last_run: str | None = None
    last_error: str | None = None
