"""The archive sweep's singleton lock ``.mcp/archive.lock``: one sweep at a time per folder.

The lock holds ``{pid, started_at, owner}``; one older than :data:`LOCK_TTL` is a crashed sweep's
and is taken over. The sidecar file lock ``archive-lock`` makes "this lock is stale, replace it"
one step between processes, and only the owner that took a lock removes it.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from dokoro_store.clock import Clock, iso, parse_iso
from dokoro_store.paths import StorePaths
from dokoro_store.walls.files import file_lock, read_text_or_none

__all__ = ["LOCK_TTL", "SweepLock"]

log = logging.getLogger("dokoro.store")

LOCK_TTL = timedelta(minutes=5)
_SIDECAR = "archive-lock"


class SweepLock:
    """Take and release the sweep lock of one workspace folder."""

    def __init__(self, paths: StorePaths, clock: Clock) -> None:
        self._paths = paths
        self._clock = clock

    @property
    def path(self) -> Path:
        return self._paths.mcp_dir / "archive.lock"

    def acquire(self) -> str | None:
        """Take the sweep lock; the owner token, or None when a live sweep holds it."""
        owner = secrets.token_hex(8)
        now = self._clock.now()
        body = json.dumps({"pid": os.getpid(), "started_at": iso(now), "owner": owner})
        with file_lock(self._paths.locks_dir, _SIDECAR, within=self._paths.root):
            for _attempt in range(2):
                if _create_exclusive(self.path, body):
                    return owner
                if not self._is_stale(now):
                    return None
                log.warning("dokoro: removing a stale archive sweep lock %s", self.path)
                self.path.unlink(missing_ok=True)
        return None

    def _is_stale(self, now: datetime) -> bool:
        text = read_text_or_none(self.path, within=self._paths.root)
        if text is None:
            return True
        try:
            started = parse_iso(str(json.loads(text)["started_at"]))
        except (ValueError, KeyError, TypeError):
            return True  # unreadable or malformed: nobody can be waiting on it
        return now - started >= LOCK_TTL

    def release(self, owner: str) -> None:
        """Remove the lock if ``owner`` still holds it (a lock taken over since is left alone)."""
        with file_lock(self._paths.locks_dir, _SIDECAR, within=self._paths.root):
            text = read_text_or_none(self.path, within=self._paths.root)
            try:
                mine = text is not None and json.loads(text).get("owner") == owner
            except (ValueError, AttributeError):
                mine = False
            if mine:
                self.path.unlink(missing_ok=True)


def _create_exclusive(path: Path, body: str) -> bool:
    """Create ``path`` holding ``body`` only if it does not exist; a reader never sees it half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # atomic: fails when the lock exists, and the content is already there
        except FileExistsError:
            return False
        except OSError:
            # A file system without hard links: fall back to an exclusive create.
            try:
                with path.open("x", encoding="utf-8") as handle:
                    handle.write(body)
            except FileExistsError:
                return False
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)
