"""The workspace lock file ``.mcp/workspace.lock`` (reference §4.11): who holds the workspace.

A lock lives 30 minutes, renewed by its holder's tool calls; one whose holder has been silent
for an hour is stale even before it expires, and a stale lock is taken over without ``force``.
Every writer of the file holds the sidecar lock ``workspace-lock``, so deciding that a lock is
stale and replacing it is one step: two agents cannot both take over the same stale lock.

``force`` takes over a live lock only from an anonymous holder (a stdio session without
``DOKORO_AGENT_ID``, whose restarted process gets a new time-based id, as in the reference). A
named agent's live lock (an authenticated agent, or ``DOKORO_AGENT_ID``) is taken over only once
it is stale: force does not shorten another agent's lease (docs/team.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dokoro_store.clock import iso, parse_iso
from dokoro_store.errors import NotOwnerError, WorkspaceLockedError
from dokoro_store.paths import StorePaths
from dokoro_store.results.working import ONE_WORKSPACE
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none

__all__ = ["HEARTBEAT_STALE", "LOCK_TTL", "ONE_WORKSPACE", "LockInfo", "WorkspaceLock"]


LOCK_TTL = timedelta(minutes=30)
HEARTBEAT_STALE = timedelta(minutes=60)
_SIDECAR = "workspace-lock"


@dataclass(frozen=True)
class LockInfo:
    agent_id: str
    session_id: str
    acquired_at: datetime
    expires_at: datetime
    last_heartbeat: datetime
    pid: int
    named: bool = False  # the holder has an identity (token or DOKORO_AGENT_ID), not a generated id

    def is_stale(self, now: datetime) -> bool:
        return now > self.expires_at or now - self.last_heartbeat > HEARTBEAT_STALE

    @property
    def stale_at(self) -> datetime:
        """When the lock goes stale if its holder does nothing more."""
        return min(self.expires_at, self.last_heartbeat + HEARTBEAT_STALE)

    def to_json(self) -> str:
        return json.dumps(
            {
                "agent_id": self.agent_id,
                "session_id": self.session_id,
                "acquired_at": iso(self.acquired_at),
                "expires_at": iso(self.expires_at),
                "last_heartbeat": iso(self.last_heartbeat),
                "pid": self.pid,
                "named": self.named,
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> LockInfo:
        data = json.loads(text)
        return cls(
            agent_id=str(data["agent_id"]),
            session_id=str(data["session_id"]),
            acquired_at=parse_iso(data["acquired_at"]),
            expires_at=parse_iso(data["expires_at"]),
            last_heartbeat=parse_iso(data["last_heartbeat"]),
            pid=int(data.get("pid", 0)),
            named=bool(data.get("named", False)),
        )


class WorkspaceLock:
    """Take, renew, release and read the workspace lock of one store folder."""

    def __init__(self, paths: StorePaths) -> None:
        self._paths = paths

    def read(self) -> LockInfo | None:
        text = read_text_or_none(self._paths.workspace_lock, within=self._paths.root)
        if text is None:
            return None
        try:
            return LockInfo.from_json(text)
        except (ValueError, KeyError, TypeError):
            # An unreadable lock still means "someone is here" until it is as old as a lock's TTL;
            # then it is stale like any other, so a damaged file cannot lock the workspace forever.
            try:
                written = datetime.fromtimestamp(self._paths.workspace_lock.stat().st_mtime, UTC)
            except FileNotFoundError:
                return None
            return LockInfo("unknown", "unknown", written, written + LOCK_TTL, written, 0)

    def take(self, lock: LockInfo, *, force: bool, named: bool) -> str | None:
        """Write ``lock``; the agent whose lock it replaced (None when there was none, or it was ours).

        A live lock of another agent refuses the claim unless ``force``. A ``named`` (authenticated)
        agent re-claiming its own workspace renews it rather than locking itself out.
        """
        now = lock.acquired_at
        with file_lock(self._paths.locks_dir, _SIDECAR, within=self._paths.root):
            if self._create(lock):
                return None
            took_over: str | None = None
            existing = self.read()
            if existing is not None:
                own = named and existing.agent_id == lock.agent_id
                if not existing.is_stale(now) and not own:
                    minutes = max(0, int((existing.expires_at - now).total_seconds() // 60))
                    if existing.named:
                        # A named holder's live lease is never cut short, force or not.
                        raise (NotOwnerError if force else WorkspaceLockedError)(
                            f"Workspace is locked by {existing.agent_id}, whose lock is live (expires in {minutes} "
                            f"minutes, stale at {iso(existing.stale_at)} unless they keep working). force=true takes "
                            "over only a stale lock of a named agent: leave them a dokoro_handoff_write, or wait "
                            f"until the lock is stale and claim again. {ONE_WORKSPACE}"
                        )
                    if not force:
                        raise WorkspaceLockedError(
                            f"Workspace is locked by {existing.agent_id}. Expires in {minutes} minutes. "
                            f"Use force=true to override. {ONE_WORKSPACE}"
                        )
                took_over = None if own else existing.agent_id
            atomic_write_text(self._paths.workspace_lock, lock.to_json(), within=self._paths.root)
            return took_over

    def _create(self, info: LockInfo) -> bool:
        """Write the lock when there is none; False when one exists. The caller holds the sidecar
        lock, so checking and writing is one step; the write is atomic, so a crash never leaves an
        empty lock file."""
        if self._paths.workspace_lock.exists():
            return False
        atomic_write_text(self._paths.workspace_lock, info.to_json(), within=self._paths.root)
        return True

    def renew(self, session_id: str, now: datetime) -> None:
        """Push the expiry of ``session_id``'s lock to ``now`` + TTL (nothing when another holds it)."""
        with file_lock(self._paths.locks_dir, _SIDECAR, within=self._paths.root):
            lock = self.read()
            if lock is None or lock.session_id != session_id:
                return
            renewed = LockInfo(
                lock.agent_id, lock.session_id, lock.acquired_at, now + LOCK_TTL, now, lock.pid, lock.named
            )
            atomic_write_text(self._paths.workspace_lock, renewed.to_json(), within=self._paths.root)

    def release(self, session_id: str) -> bool:
        """Remove ``session_id``'s lock; False when the lock is another session's (or gone)."""
        with file_lock(self._paths.locks_dir, _SIDECAR, within=self._paths.root):
            lock = self.read()
            if lock is None or lock.session_id != session_id:
                return False
            self._paths.workspace_lock.unlink(missing_ok=True)
            return True

    def remove(self) -> None:
        """Drop the lock file whoever holds it (a claim that failed after taking it)."""
        self._paths.workspace_lock.unlink(missing_ok=True)
