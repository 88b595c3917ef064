"""The machine-wide write turn of one SQLite database: the lock file ``<name>.writer.lock`` beside it.

SQLite's busy handler polls in sleeps of 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms, so a
writer waiting behind a 12 ms remember wakes after 18 or 33 ms, and one that keeps losing the race
waits hundreds of ms (4 agents remembering at once: p95 534 ms). Writers on one machine queue
instead on this lock file (an ``flock``), tried every :data:`POLL_S`; the busy timeout stays the
backstop for a writer that does not take it (another program, a process of an older dokoro).

The file is opened once per process (placed by :func:`dokoro_store.walls.containment.lock_file`:
no symlink, and opened without following one) and kept open: taking and handing back the turn are
one ``flock`` call each. (The ``filelock`` package this replaces opened, locked, unlocked and
closed the file on every write, with its own bookkeeping: about a tenth of a plain write's CPU.)
The turn is taken under the process's own turn (:class:`~dokoro_store.db.engine.Database`), one
thread at a time, so it is shared between threads; nested writes of that thread count up and down
on it, and only the outermost release lets another process in.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

try:
    import fcntl

    _FLOCK = True
except ImportError:  # pragma: no cover - not POSIX: the busy handler alone queues the writers
    _FLOCK = False

__all__ = ["POLL_S", "TurnFile", "TurnTimeout"]

POLL_S = 0.001


class TurnTimeout(Exception):
    """The turn stayed with another process past the deadline."""


class TurnFile:
    """The write turn of one database file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None
        self._depth = 0
        self._lock = threading.Lock()  # guards the descriptor's opening and closing only

    @property
    def path(self) -> Path:
        return self._path

    def acquire(self, timeout: float) -> None:
        """Take the turn (again, when this thread holds it); :class:`TurnTimeout` after ``timeout`` s."""
        if self._depth:
            self._depth += 1
            return
        fd = self._descriptor()
        if fd is not None:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TurnTimeout(str(self._path)) from None
                    time.sleep(POLL_S)
        self._depth = 1

    def release(self) -> None:
        """Hand the turn back (the outermost release lets another process in)."""
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _descriptor(self) -> int | None:
        if not _FLOCK:
            return None
        if self._fd is None:
            with self._lock:
                if self._fd is None:
                    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                    self._fd = os.open(self._path, flags, 0o644)
        return self._fd
