"""Working memory: claim the workspace, read its status, log to it and dump it.

The workspace is the folder's live working file (``current.md``, :mod:`.current_file`) guarded
by a lock file (:mod:`.workspace_lock`, reference §2.1 and §4.11); a claimed session's time is
tracked in ``.mcp/session.json`` (:mod:`.session_time`) and a dump saves it to ``daily/`` and as
a document (:mod:`.session_dump`). This module orchestrates them.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.clock import Clock, iso, parse_iso, slug
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError, InvalidArgumentError, NotOwnerError, NoWorkspaceError
from dokoro_store.paths import StorePaths
from dokoro_store.results.working import ONE_WORKSPACE, LogEntry, SessionDump, WorkspaceClaim, WorkspaceStatus
from dokoro_store.walls import frontmatter
from dokoro_store.walls.files import atomic_write_text
from dokoro_store.walls.ownership import known_agent, owned_by_another
from dokoro_store.walls.secrets import redact
from dokoro_store.working.current.file import CurrentFile
from dokoro_store.working.lock import LOCK_TTL, LockInfo, WorkspaceLock
from dokoro_store.working.workspace.dump import DumpDocuments, DumpWriter, render_dump, topic
from dokoro_store.working.workspace.session_time import SessionTime

__all__ = ["DOC_TYPES", "DUMP_STATUSES", "LOG_TYPES", "ClaimResult", "LockInfo", "WorkspaceService"]

log = logging.getLogger("dokoro.store")

LOG_TYPES = ("progress", "note", "issue", "decision")
LOG_ICONS = {"progress": "📝", "note": "💡", "issue": "⚠️", "decision": "🎯"}
DUMP_STATUSES = ("active", "pending", "backlog", "done", "paused", "blocked")
DOC_TYPES = ("issue", "prd", "research", "decision", "note", "session", "plan")

_PROGRESS_HEADING = re.compile(r"^## [^\n]*Progress[^\n]*$", re.MULTILINE)

# Run after every successful claim with the claim root (the archive sweep); a line for the
# claim's message or None. It must not raise.
AfterClaim = Callable[[Path | None], str | None]
# Release the file claims tagged with a session id when that session ends; how many.
ReleaseClaims = Callable[[str], int]


@dataclass(frozen=True)
class ClaimResult:
    """A claim, with what only its message needs (the kinds of secret redacted from the task)."""

    agent_id: str
    session_id: str
    task: str
    lock_expires_at: datetime
    took_over: str | None = None
    sweep_note: str | None = None  # what the opportunistic archive sweep did, when worth saying
    redacted: tuple[str, ...] = ()  # kinds of secret removed from the task before it was written

    def result(self) -> WorkspaceClaim:
        return WorkspaceClaim(
            agent_id=self.agent_id,
            session_id=self.session_id,
            task=self.task,
            lock_expires_at=self.lock_expires_at,
            took_over_from=self.took_over,
            sweep=self.sweep_note,
        )


class WorkspaceService:
    """Claim, inspect, log to and dump the workspace of one store folder.

    Collaborators come in through the constructor: ``current`` (current.md, shared with the
    services that log to it), ``documents`` (where a dump's document is saved and indexed),
    ``after_claim`` (the archive sweep a claim runs) and ``release_claims`` (the coordination
    layer's file claims, released when a session ends).
    """

    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        *,
        current: CurrentFile,
        documents: DumpDocuments,
        after_claim: AfterClaim | None = None,
        release_claims: ReleaseClaims | None = None,
    ) -> None:
        self._paths = paths
        self._clock = clock
        self._current = current
        self._lock = WorkspaceLock(paths)
        self._time = SessionTime(paths)
        self._dumps = DumpWriter(paths, db, documents)
        self._after_claim = after_claim
        self._release_claims = release_claims
        # The session this process claimed. Only its own tool calls count toward that session's
        # time and renew its lock: another agent's calls (even a refused claim) must not.
        self._claimed_session: str | None = None
        # Tool calls counted toward that session and not yet written: (session, tool, when).
        self._tool_uses: deque[tuple[str, str, datetime]] = deque()
        self._tool_uses_lock = threading.Lock()  # one writer of the queue at a time, in call order

    @property
    def claimed_session(self) -> str | None:
        """The workspace session this process claimed and has not ended, if any."""
        return self._claimed_session

    def _require_folder(self) -> None:
        if not self._paths.root.is_dir():
            raise NoWorkspaceError(
                f"No dokoro folder at {self._paths.root}. Run dokoro_init (or `dokoro init`) first, "
                "or set DOKORO_PATH to an existing store."
            )

    # ------------------------------------------------------------------ claim
    def claim(
        self,
        task: str,
        *,
        force: bool = False,
        tags: dict[str, Any] | None = None,
        agent_id: str | None = None,
        claim_root: Path | None = None,
    ) -> ClaimResult:
        """Take the workspace lock and start a session.

        ``agent_id`` names the claimant (an authenticated agent, or ``DOKORO_AGENT_ID``); without it
        the reference's time-based id ``agent-YYMMDDHHMMSS`` is generated. A named agent's live lock
        is never taken over, not even with ``force`` (:mod:`.workspace_lock`). ``claim_root`` is the folder file
        claims are keyed from, for the archive sweep that follows a claim.
        """
        cleaned_task = redact(task.strip())
        task = cleaned_task.text
        if not task:
            raise InvalidArgumentError("task must not be empty: describe what this session will work on")
        self._require_folder()
        self.flush_tool_uses()
        now = self._clock.now()
        agent_id = known_agent(agent_id)
        named = agent_id is not None
        agent_id = agent_id or f"agent-{now:%y%m%d%H%M%S}"
        current = self._current.read()
        if current is not None and not named:
            previous = str(current[0].get("agent_id", ""))
            if previous.startswith(agent_id):
                suffix = previous[len(agent_id) :]
                counter = int(suffix[1:]) + 1 if suffix.startswith("-") and suffix[1:].isdigit() else 2
                agent_id = f"{agent_id}-{counter}"
        session_id = f"session-{now:%Y-%m-%dT%H-%M-%S}-{now.microsecond // 1000:03d}Z-{agent_id}"
        lock = LockInfo(agent_id, session_id, now, now + LOCK_TTL, now, os.getpid(), named)
        took_over = self._lock.take(lock, force=force, named=named)
        try:
            if took_over is not None:
                self._keep_abandoned(now)
            self._write_claimed_current(agent_id, session_id, task, tags or {}, now)
            self._time.start(lock)
        except OSError:
            self._lock.remove()
            raise
        self._claimed_session = session_id
        self._current.claimed_by = agent_id
        note = self._after_claim(claim_root) if self._after_claim is not None else None
        return ClaimResult(agent_id, session_id, task, lock.expires_at, took_over, note, cleaned_task.kinds)

    def _keep_abandoned(self, now: datetime) -> None:
        """Before a stale or forced takeover rewrites current.md, keep the previous session's log
        as ``daily/<slug>-abandoned-<topic>.md``: a takeover must not erase unsaved work."""
        with self._current.locked():
            text = self._current.read_text()
            if not text:
                return
            data, _body = frontmatter.parse(text)
            if not data.get("session_id"):
                return
            path = self._dumps.unique_daily_path(f"{slug(now)}-abandoned-{topic(str(data.get('task') or 'session'))}")
            atomic_write_text(path, text, within=self._paths.root)

    def _write_claimed_current(
        self, agent_id: str, session_id: str, task: str, tags: dict[str, Any], now: datetime
    ) -> None:
        data: dict[str, Any] = {
            "agent_id": agent_id,
            "session_id": session_id,
            "session_start": iso(now),
            "last_active": iso(now),
            "task": task,
        }
        if tags:
            data["tags"] = tags
        body = (
            "# Current Workspace\n\n"
            f"## 🎯 Active Task\n{task}\n\n"
            "## 📋 Session Info\n"
            f"- **Agent:** {agent_id}\n"
            f"- **Session:** {session_id}\n"
            f"- **Started:** {iso(now)}\n"
            f"- **Lock expires:** {iso(now + LOCK_TTL)}\n\n"
            "## 📝 Progress\n"
            f"\n🚀 [{now:%H:%M:%S}] Session claimed: {task}\n"
        )
        with self._current.locked():
            self._current.write(data, body)

    # ------------------------------------------------------------------ time tracking
    def record_tool_use(self, tool_name: str) -> bool:
        """Count a tool call toward the claimed session's time tracking; returns whether it counts.

        Only queued in memory (no file I/O on the tool's path): :meth:`flush_tool_uses` writes
        the queue (the server does so in the background), and every reader of the session's
        time here flushes first. Nothing counts unless this process claimed the workspace.
        """
        session_id = self._claimed_session
        if session_id is None:
            return False
        self._tool_uses.append((session_id, tool_name, self._clock.now()))
        return True

    def flush_tool_uses(self) -> int:
        """Write the queued tool calls to ``session.json`` and renew the lock when due; returns how
        many counted (see :class:`~dokoro_store.working.workspace.session_time.SessionTime`)."""
        with self._tool_uses_lock:
            uses = [self._tool_uses.popleft() for _ in range(len(self._tool_uses))]
            counted, heartbeat = self._time.record(uses)
            if heartbeat is not None:
                self._lock.renew(*heartbeat)
            return counted

    # ------------------------------------------------------------------ status
    def status(self) -> WorkspaceStatus:
        # No database on this path: the lock file, current.md and session.json, read without a lock.
        # The one lock (session-json, in flush_tool_uses) is taken only when tool calls are queued:
        # writing them is a read-modify-write of the file that another process may do at once.
        self._require_folder()
        self.flush_tool_uses()
        now = self._clock.now()
        lock = self._lock.read()
        lock_fields: dict[str, Any] = {}
        if lock is not None:
            stale = lock.is_stale(now)
            lock_fields = {
                "locked": not stale,
                "locked_by": lock.agent_id,
                "lock_expires_at": lock.expires_at,
                "lock_stale": stale,
            }
        current = self._current.read()
        if current is None:
            return WorkspaceStatus(active=False, **lock_fields)
        data, body = current
        meta = self._time.read() or {}
        start = _parse_optional(data.get("session_start"))
        timing = meta.get("timing", {})
        return WorkspaceStatus(
            active=True,
            task=_str_or_none(data.get("task")),
            agent_id=_str_or_none(data.get("agent_id")),
            session_id=_str_or_none(data.get("session_id")),
            session_start=start,
            session_minutes=round((now - start).total_seconds() / 60) if start else 0,
            active_minutes=int(timing.get("active_minutes", 0)),
            entries=len(re.findall(r"^\S+ \[\d{2}:\d{2}:\d{2}\] ", body, re.MULTILINE)),
            tool_calls=sum(int(v) for v in meta.get("tool_usage", {}).values()),
            **lock_fields,
        )

    # ------------------------------------------------------------------ session log
    def log(self, entry: str, entry_type: str = "progress", *, agent: str | None = None) -> LogEntry:
        """Append a line to the workspace log; ``agent`` (who calls) may not write to a workspace
        another agent holds."""
        entry = entry.strip()
        if not entry:
            raise InvalidArgumentError("entry must not be empty: write what happened")
        if entry_type not in LOG_TYPES:
            raise InvalidArgumentError(f"type must be one of {', '.join(LOG_TYPES)}; got {entry_type!r}")
        self._require_folder()
        now = self._clock.now()
        cleaned = redact(entry)
        self._current.require_writable(agent, "log to it")
        # A file, not a row: the append is a read-modify-write of current.md, so it keeps the
        # current-md lock (two agents logging at once must not lose a line); no database on this path.
        if not self._current.log_line(LOG_ICONS[entry_type], cleaned.text, agent=agent):
            raise NoWorkspaceError("No active workspace. Use dokoro_workspace_claim first.")
        return LogEntry(type=entry_type, time=now, redacted=cleaned.kinds)

    # ------------------------------------------------------------------ dump
    def dump(
        self,
        reason: str,
        *,
        keep_active: bool = True,
        status: str = "active",
        doc_type: str = "session",
        acting_agent: str | None = None,
    ) -> SessionDump:
        """Save the workspace to a daily file and a document; optionally end the session.

        ``acting_agent`` is the caller (authenticated, or ``DOKORO_AGENT_ID``): only the agent
        holding the workspace may dump it (and so release its lock).
        """
        if status not in DUMP_STATUSES:
            raise InvalidArgumentError(f"status must be one of {', '.join(DUMP_STATUSES)}; got {status!r}")
        if doc_type not in DOC_TYPES:
            raise InvalidArgumentError(f"docType must be one of {', '.join(DOC_TYPES)}; got {doc_type!r}")
        reason = redact(reason.strip()).text
        if not reason:
            raise InvalidArgumentError("reason must not be empty: say why the session is being dumped")
        self._require_folder()
        self.flush_tool_uses()
        now = self._clock.now()
        with self._current.locked():
            text = self._current.read_text()
            if text is None:
                raise NoWorkspaceError("Nothing to dump: no active workspace. Use dokoro_workspace_claim first.")
            data, _body = frontmatter.parse(text)
            task = str(data.get("task") or "session")
            agent_id = str(data.get("agent_id") or "unknown")
            session_id = str(data.get("session_id") or "")
            if owned_by_another(agent_id, acting_agent) and not self._current.holder_is_anonymous():
                raise NotOwnerError(
                    f"The workspace is held by {agent_id}; you are {acting_agent}. Only the holder can dump "
                    "or release it. Leave them a dokoro_handoff_write, or claim the workspace with "
                    f"dokoro_workspace_claim once their lock is stale (then dump your own session). {ONE_WORKSPACE}"
                )
            meta = self._time.finalise(now, close=not keep_active)
            start = _parse_optional(data.get("session_start"))
            duration = round((now - start).total_seconds() / 60) if start else 0

            path = self._dumps.unique_daily_path(f"{slug(now)}-session-{topic(task)}")
            content = render_dump(now, task, agent_id, reason, status, doc_type, data, text, meta, duration)
            atomic_write_text(path, content, within=self._paths.root)
            relative = self._paths.relative(path)

            released = False
            if keep_active:
                link = f"Session dumped to: [{path.name}]({relative})"
                updated, count = _PROGRESS_HEADING.subn(lambda m: f"{m.group(0)}\n{link}", text, count=1)
                self._current.write_text(updated if count else text + f"\n{link}\n")
            else:
                released = self._lock.release(session_id)
                self._current.remove()
                if session_id == self._claimed_session:
                    self._claimed_session = None
                    self._current.claimed_by = None

        doc_indexed = self._dumps.save_document(path.stem, relative, f"Session: {task}", content, doc_type, status)
        claims_released = 0 if keep_active else self._release_session_claims(session_id)
        return SessionDump(
            path=str(path),
            relative=relative,
            doc_id=path.stem,
            status=status,
            doc_type=doc_type,
            reason=reason,
            duration_minutes=duration,
            released=released,
            doc_indexed=doc_indexed,
            claims_released=claims_released,
        )

    def _release_session_claims(self, session_id: str) -> int:
        # Best effort: the session is already dumped and ended; a claim left behind expires on its TTL.
        if self._release_claims is None or not session_id:
            return 0
        try:
            return self._release_claims(session_id)
        except (SQLAlchemyError, DokoroError):
            log.warning("dokoro: could not release the file claims of session %s", session_id, exc_info=True)
            return 0


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _parse_optional(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        return parse_iso(str(value))
    except ValueError:
        return None
