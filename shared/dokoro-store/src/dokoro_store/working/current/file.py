"""current.md, the workspace's live working file: one cross-process lock for every writer.

The workspace writes it on claim and dump; questions, assets and plans append lines to it (the
"ws-log" of the reference, §2.1). Every change runs under the ``current-md`` file lock and is
written atomically, so two agents logging at once never lose a line and a reader never sees
half a file.

Ownership (:mod:`dokoro_store.walls.ownership`): while an agent holds the workspace lock, another known
agent's writes to current.md are refused (the session log, section edits, regeneration) or, for
the lines other services add as a side effect (a question asked, a plan item checked), left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dokoro_store.clock import Clock, iso
from dokoro_store.errors import NotOwnerError
from dokoro_store.paths import StorePaths
from dokoro_store.results.working import ONE_WORKSPACE
from dokoro_store.walls import frontmatter
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none
from dokoro_store.walls.ownership import known_agent
from dokoro_store.walls.secrets import redact
from dokoro_store.working.lock import LockInfo, WorkspaceLock

__all__ = ["CURRENT_LOCK", "CurrentFile"]

CURRENT_LOCK = "current-md"


class CurrentFile:
    """Read, write and append to current.md of one store folder."""

    def __init__(self, paths: StorePaths, clock: Clock) -> None:
        self._paths = paths
        self._clock = clock
        self._lock = WorkspaceLock(paths)
        # The agent this process claimed the workspace as (set by the workspace service): an
        # anonymous process that claimed writes as that agent.
        self.claimed_by: str | None = None

    def held_against(self, agent: str | None) -> LockInfo | None:
        """The live lock of another agent when ``agent`` (or this process's claim) would write to
        current.md; None when the write is allowed (no identity, no live lock, or our own)."""
        writer = known_agent(agent) or self.claimed_by
        if writer is None:
            return None
        lock = self._lock.read()
        if lock is None or lock.is_stale(self._clock.now()) or lock.agent_id == writer:
            return None
        if not lock.named:
            return None  # an anonymous holder (a generated id) is the person who runs the store: no wall
        return lock

    def holder_is_anonymous(self) -> bool:
        """Whether the workspace's lock was taken by a session without an identity (a generated id)."""
        lock = self._lock.read()
        return lock is not None and not lock.named

    def require_writable(self, agent: str | None, action: str) -> None:
        """Refuse ``action`` on current.md when another agent holds the workspace (see :meth:`held_against`)."""
        lock = self.held_against(agent)
        if lock is None:
            return
        writer = known_agent(agent) or self.claimed_by
        raise NotOwnerError(
            f"The workspace is held by {lock.agent_id} (lock live until {iso(lock.expires_at)}); you are {writer} "
            f"and may not {action}. Keep your notes with dokoro_shared_note_append, leave "
            f"{lock.agent_id} a dokoro_handoff_write, or claim the workspace with dokoro_workspace_claim once "
            f"the lock is stale (at {iso(lock.stale_at)} unless {lock.agent_id} keeps working). {ONE_WORKSPACE}"
        )

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the current.md lock: read-modify-write inside the block is one step."""
        with file_lock(self._paths.locks_dir, CURRENT_LOCK, within=self._paths.root):
            yield

    def read_text(self) -> str | None:
        return read_text_or_none(self._paths.current_md, within=self._paths.root)

    def read(self) -> tuple[dict[str, Any], str] | None:
        """``(front matter, body)``, or None when there is no current.md."""
        text = self.read_text()
        return None if text is None else frontmatter.parse(text)

    def write_text(self, text: str) -> None:
        atomic_write_text(self._paths.current_md, text, within=self._paths.root)

    def write(self, data: dict[str, Any], body: str) -> None:
        self.write_text(frontmatter.render(data) + body)

    def remove(self) -> None:
        self._paths.current_md.unlink(missing_ok=True)

    def log_line(self, icon: str, text: str, *, agent: str | None = None) -> bool:
        """Append a timestamped line when current.md exists; False when there is none, or when it
        belongs to another agent's live workspace (the line is then left out)."""
        now = self._clock.now()
        if self.held_against(agent) is not None:
            return False
        with self.locked():
            current = self.read_text()
            if current is None:
                return False
            self.write_text(current + f"\n{icon} [{now:%H:%M:%S}] {redact(text).text}\n")
        return True
