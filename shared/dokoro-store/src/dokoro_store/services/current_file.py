"""current.md, the workspace's live working file: one cross-process lock for every writer.

The workspace writes it on claim and dump; questions, assets and plans append lines to it (the
"ws-log" of the reference, §2.1). Every change runs under the ``current-md`` file lock and is
written atomically, so two agents logging at once never lose a line and a reader never sees
half a file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dokoro_store import frontmatter
from dokoro_store.clock import Clock
from dokoro_store.files import atomic_write_text, file_lock, read_text_or_none
from dokoro_store.paths import StorePaths
from dokoro_store.secrets import redact

__all__ = ["CURRENT_LOCK", "CurrentFile"]

CURRENT_LOCK = "current-md"


class CurrentFile:
    """Read, write and append to current.md of one store folder."""

    def __init__(self, paths: StorePaths, clock: Clock) -> None:
        self._paths = paths
        self._clock = clock

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the current.md lock: read-modify-write inside the block is one step."""
        with file_lock(self._paths.locks_dir, CURRENT_LOCK):
            yield

    def read_text(self) -> str | None:
        return read_text_or_none(self._paths.current_md)

    def read(self) -> tuple[dict[str, Any], str] | None:
        """``(front matter, body)``, or None when there is no current.md."""
        text = self.read_text()
        return None if text is None else frontmatter.parse(text)

    def write_text(self, text: str) -> None:
        atomic_write_text(self._paths.current_md, text)

    def write(self, data: dict[str, Any], body: str) -> None:
        self.write_text(frontmatter.render(data) + body)

    def remove(self) -> None:
        self._paths.current_md.unlink(missing_ok=True)

    def log_line(self, icon: str, text: str) -> bool:
        """Append a timestamped line when current.md exists; False when there is none."""
        now = self._clock.now()
        with self.locked():
            current = self.read_text()
            if current is None:
                return False
            self.write_text(current + f"\n{icon} [{now:%H:%M:%S}] {redact(text).text}\n")
        return True
