"""How ``dokoro browse`` notices changes without re-reading everything.

Folders: a cheap signature (names, sizes, modification times of the folder's entries). Files are
written by temp file + rename, so a watched *folder* sees every change; a signature that did not
move means nothing there changed. Rows: the store's write signal (``PRAGMA data_version`` on
SQLite, the next transaction id on PostgreSQL), plus a maximum age, because some labels
("expires in 4m") change with the clock alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MAX_AGE_SECONDS", "Freshness", "folder_signature"]

# Row lists are re-read at least this often, for their clock-derived labels.
MAX_AGE_SECONDS = 30.0


def folder_signature(folders: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    """The entries of ``folders`` (not recursive) with their size and modification time."""
    entries: list[tuple[str, int, int]] = []
    for folder in folders:
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    try:
                        stat = entry.stat()
                    except FileNotFoundError:
                        continue  # renamed away between the listing and the stat
                    entries.append((entry.path, stat.st_size, stat.st_mtime_ns))
        except (FileNotFoundError, NotADirectoryError):
            entries.append((str(folder), -1, -1))
    return tuple(sorted(entries))


class Freshness:
    """Remembers the last state seen; ``changed(state)`` says whether to reload."""

    def __init__(self, max_age: float | None = None) -> None:
        self._state: object = object()
        self._at = 0.0
        self._max_age = max_age

    def changed(self, state: object) -> bool:
        now = time.monotonic()
        stale = self._max_age is not None and now - self._at >= self._max_age
        if state != self._state or stale:
            self._state, self._at = state, now
            return True
        return False

    def forget(self) -> None:
        """Reload on the next check whatever the state (after the browser's own write)."""
        self._state = object()
