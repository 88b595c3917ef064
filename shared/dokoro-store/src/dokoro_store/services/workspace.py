"""Working memory: the claimed workspace, its lock, current.md, the session log and dumps.

The workspace is the folder's live working file (``current.md``) guarded by a lock file
(``.mcp/workspace.lock``, reference §2.1 and §4.11). Every change to ``current.md`` runs under
one cross-process file lock and is written atomically, so two agents logging at once never
lose a line and a reader never sees half a file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from dokoro_store import frontmatter
from dokoro_store.clock import Clock, format_duration, iso, parse_iso, slug
from dokoro_store.db.engine import Database
from dokoro_store.errors import (
    ConflictError,
    DokoroError,
    InvalidArgumentError,
    NoWorkspaceError,
    StoreUnavailableError,
    WorkspaceLockedError,
)
from dokoro_store.files import atomic_write_text, file_lock, read_text_or_none
from dokoro_store.models import Doc
from dokoro_store.paths import StorePaths
from dokoro_store.secrets import redact

__all__ = [
    "ClaimResult",
    "DumpResult",
    "LockInfo",
    "WorkspaceService",
    "WorkspaceStatus",
]

log = logging.getLogger("dokoro.store")

LOCK_TTL = timedelta(minutes=30)
HEARTBEAT_STALE = timedelta(minutes=60)
# A tool call after this much silence starts a new stretch of activity; the gap is a pause.
INACTIVITY_GAP = timedelta(minutes=5)
# Renewing the lock on every tool call would rewrite it constantly; once a minute is plenty.
HEARTBEAT_EVERY = timedelta(minutes=1)

LOG_TYPES = ("progress", "note", "issue", "decision")
LOG_ICONS = {"progress": "📝", "note": "💡", "issue": "⚠️", "decision": "🎯"}
DUMP_STATUSES = ("active", "pending", "backlog", "done", "paused", "blocked")
DOC_TYPES = ("issue", "prd", "research", "decision", "note", "session", "plan")

_ACTIVITY_KEYS = ("coding", "testing", "research", "planning", "other")
_ACTIVITY_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("coding", ("edit", "write", "multiedit", "notebookedit", "save_file", "save_image")),
    ("testing", ("bash", "eslint", "todowrite", "test")),
    ("research", ("read", "grep", "search", "recall", "webfetch", "perplexity", "graph", "list", "status")),
    ("planning", ("think", "plan", "whats_next", "question")),
)
_CURRENT_LOCK = "current-md"
_PROGRESS_HEADING = re.compile(r"^## [^\n]*Progress[^\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class LockInfo:
    agent_id: str
    session_id: str
    acquired_at: datetime
    expires_at: datetime
    last_heartbeat: datetime
    pid: int

    def is_stale(self, now: datetime) -> bool:
        return now > self.expires_at or now - self.last_heartbeat > HEARTBEAT_STALE

    def to_json(self) -> str:
        return json.dumps(
            {
                "agent_id": self.agent_id,
                "session_id": self.session_id,
                "acquired_at": iso(self.acquired_at),
                "expires_at": iso(self.expires_at),
                "last_heartbeat": iso(self.last_heartbeat),
                "pid": self.pid,
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
        )


@dataclass(frozen=True)
class ClaimResult:
    agent_id: str
    session_id: str
    task: str
    lock_expires_at: datetime
    took_over: str | None = None
    sweep_note: str | None = None  # what the opportunistic archive sweep did, when worth saying
    redacted: tuple[str, ...] = ()  # kinds of secret removed from the task before it was written


@dataclass(frozen=True)
class Logged:
    at: datetime
    redacted: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkspaceStatus:
    active: bool
    task: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    session_start: datetime | None = None
    last_active: datetime | None = None
    lock: LockInfo | None = None
    lock_stale: bool = False
    session_minutes: int = 0
    active_minutes: int = 0
    entries: int = 0
    tool_calls: int = 0


@dataclass(frozen=True)
class DumpResult:
    path: Path
    relative: str
    doc_id: str
    status: str
    doc_type: str
    reason: str
    duration_minutes: int
    released: bool
    doc_indexed: bool
    claims_released: int = 0


@dataclass
class _Front:
    data: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def _topic(task: str, limit: int = 30) -> str:
    text = re.sub(r"[^a-z0-9]+", "-", task.lower()).strip("-")
    return text[:limit].strip("-") or "session"


def _activity_of(tool_name: str) -> str:
    lowered = tool_name.lower()
    for kind, needles in _ACTIVITY_RULES:
        if any(needle in lowered for needle in needles):
            return kind
    return "other"


class WorkspaceService:
    """Claim, inspect, log to and dump the workspace of one store folder."""

    def __init__(self, paths: StorePaths, db: Database, clock: Clock) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        # The session this process claimed. Only its own tool calls count toward that session's
        # time and renew its lock: another agent's calls (even a refused claim) must not.
        self._claimed_session: str | None = None
        # Tool calls counted toward that session and not yet written: (session, tool, when).
        self._tool_uses: deque[tuple[str, str, datetime]] = deque()
        self._tool_uses_lock = threading.Lock()  # one writer of the queue at a time, in call order
        # Run after every successful claim with the claim root (the Store wires the archive sweep);
        # returns a line for the claim's message or None. It must not raise.
        self.after_claim: Callable[[Path | None], str | None] | None = None
        # Releases the file claims tagged with a session id when that session ends (the Store
        # wires the coordination layer); returns how many.
        self.release_claims: Callable[[str], int] | None = None
        # Indexes a document this service saved (the Store wires the search index: chunks,
        # vectors, entity extraction). Best effort: a failure is logged, never raised.
        self.after_doc_saved: Callable[[str], None] | None = None

    # ------------------------------------------------------------------ helpers
    def _require_folder(self) -> None:
        if not self._paths.root.is_dir():
            raise NoWorkspaceError(
                f"No dokoro folder at {self._paths.root}. Run dokoro_init (or `dokoro init`) first, "
                "or set DOKORO_PATH to an existing store."
            )

    def _read_lock(self) -> LockInfo | None:
        text = read_text_or_none(self._paths.workspace_lock)
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

    def _create_lock(self, info: LockInfo) -> bool:
        """Write the lock when there is none; False when one exists. Callers hold the
        ``workspace-lock`` side lock, so checking and writing is one step; the write is atomic,
        so a crash never leaves an empty lock file."""
        if self._paths.workspace_lock.exists():
            return False
        atomic_write_text(self._paths.workspace_lock, info.to_json())
        return True

    def _read_current(self) -> _Front | None:
        text = read_text_or_none(self._paths.current_md)
        if text is None:
            return None
        data, body = frontmatter.parse(text)
        return _Front(data, body)

    def _write_current(self, data: dict[str, Any], body: str) -> None:
        atomic_write_text(self._paths.current_md, frontmatter.render(data) + body)

    def log_line(self, icon: str, text: str) -> bool:
        """Append a timestamped line to current.md when it exists (the "ws-log" of the reference)."""
        now = self._clock.now()
        with file_lock(self._paths.locks_dir, _CURRENT_LOCK):
            current = read_text_or_none(self._paths.current_md)
            if current is None:
                return False
            line = f"\n{icon} [{now:%H:%M:%S}] {redact(text).text}\n"
            atomic_write_text(self._paths.current_md, current + line)
        return True

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

        ``agent_id`` names the claimant (an authenticated agent); without it the reference's
        time-based id ``agent-YYMMDDHHMMSS`` is generated. ``claim_root`` is the folder file
        claims are keyed from, for the archive sweep that follows a claim.
        """
        cleaned_task = redact(task.strip())
        task = cleaned_task.text
        if not task:
            raise InvalidArgumentError("task must not be empty: describe what this session will work on")
        self._require_folder()
        self.flush_tool_uses()
        now = self._clock.now()
        named = agent_id is not None
        agent_id = agent_id or f"agent-{now:%y%m%d%H%M%S}"
        current = self._read_current()
        if current is not None and not named:
            previous = str(current.data.get("agent_id", ""))
            if previous.startswith(agent_id):
                suffix = previous[len(agent_id) :]
                counter = int(suffix[1:]) + 1 if suffix.startswith("-") and suffix[1:].isdigit() else 2
                agent_id = f"{agent_id}-{counter}"
        session_id = f"session-{now:%Y-%m-%dT%H-%M-%S}-{now.microsecond // 1000:03d}Z-{agent_id}"
        lock = LockInfo(agent_id, session_id, now, now + LOCK_TTL, now, os.getpid())

        took_over: str | None = None
        # Every writer of the lock file holds this sidecar lock, so deciding that a lock is stale
        # and replacing it is one step: two agents cannot both take over the same stale lock.
        with file_lock(self._paths.locks_dir, "workspace-lock"):
            if not self._create_lock(lock):
                existing = self._read_lock()
                if existing is not None:
                    stale = existing.is_stale(now)
                    # A named agent re-claiming its own workspace renews it rather than locking itself out.
                    own = named and existing.agent_id == agent_id
                    if not stale and not force and not own:
                        minutes = max(0, int((existing.expires_at - now).total_seconds() // 60))
                        raise WorkspaceLockedError(
                            f"Workspace is locked by {existing.agent_id}. Expires in {minutes} minutes. "
                            "Use force=true to override."
                        )
                    took_over = None if own else existing.agent_id
                atomic_write_text(self._paths.workspace_lock, lock.to_json())

        try:
            if took_over is not None:
                self._keep_abandoned(now)
            self._write_claimed_current(agent_id, session_id, task, tags or {}, now)
            with file_lock(self._paths.locks_dir, "session-json"):
                self._write_session_json(self._new_session_meta(lock))
        except OSError:
            self._paths.workspace_lock.unlink(missing_ok=True)
            raise
        self._claimed_session = session_id
        note = self.after_claim(claim_root) if self.after_claim is not None else None
        return ClaimResult(agent_id, session_id, task, lock.expires_at, took_over, note, cleaned_task.kinds)

    def _keep_abandoned(self, now: datetime) -> None:
        """Before a stale or forced takeover rewrites current.md, keep the previous session's log
        as ``daily/<slug>-abandoned-<topic>.md``: a takeover must not erase unsaved work."""
        with file_lock(self._paths.locks_dir, _CURRENT_LOCK):
            text = read_text_or_none(self._paths.current_md)
            if not text:
                return
            data, _body = frontmatter.parse(text)
            if not data.get("session_id"):
                return
            path = self._unique_daily_path(f"{slug(now)}-abandoned-{_topic(str(data.get('task') or 'session'))}")
            atomic_write_text(path, text)

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
        with file_lock(self._paths.locks_dir, _CURRENT_LOCK):
            self._write_current(data, body)

    # ------------------------------------------------------------------ session.json
    def _new_session_meta(self, lock: LockInfo) -> dict[str, Any]:
        return {
            "session": {
                "id": lock.session_id,
                "start": iso(lock.acquired_at),
                "end": None,
                "agent_id": lock.agent_id,
                "lock_acquired": iso(lock.acquired_at),
                "lock_expires": iso(lock.expires_at),
                "last_heartbeat": iso(lock.last_heartbeat),
                "last_activity": iso(lock.acquired_at),
            },
            "timing": {"total_minutes": 0, "active_minutes": 0, "pause_minutes": 0, "pauses": []},
            "tasks": [],
            "tool_usage": {},
            "activity_breakdown": dict.fromkeys(_ACTIVITY_KEYS, 0),
        }

    def _read_session_json(self) -> dict[str, Any] | None:
        text = read_text_or_none(self._paths.session_json)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        return data if isinstance(data, dict) else None

    def _write_session_json(self, data: dict[str, Any]) -> None:
        atomic_write_text(self._paths.session_json, json.dumps(data, indent=2, ensure_ascii=False))

    def record_tool_use(self, tool_name: str) -> bool:
        """Count a tool call toward the claimed session's time tracking; returns whether it counts.

        Only queued in memory (no file I/O on the tool's path): :meth:`flush_tool_uses` writes
        the queue, and every reader of ``session.json`` here flushes first. Nothing counts
        unless this process claimed the workspace.
        """
        session_id = self._claimed_session
        if session_id is None:
            return False
        self._tool_uses.append((session_id, tool_name, self._clock.now()))
        return True

    def flush_tool_uses(self) -> int:
        """Write the queued tool calls to ``session.json`` and renew the lock; returns how many counted.

        Active time accrues between calls less than five minutes apart; a longer silence is
        recorded as an ``auto_inactive`` pause. Calls of a session that has ended or is no
        longer the current one do not count.
        """
        with self._tool_uses_lock:
            uses = [self._tool_uses.popleft() for _ in range(len(self._tool_uses))]
            if not uses or not self._paths.session_json.exists():
                return 0
            counted = 0
            renew: tuple[str, datetime] | None = None
            with file_lock(self._paths.locks_dir, "session-json"):
                meta = self._read_session_json()
                if meta is None or meta.get("session", {}).get("end"):
                    return 0
                session = meta.setdefault("session", {})
                timing = meta.setdefault("timing", {"active_minutes": 0, "pause_minutes": 0, "pauses": []})
                usage = meta.setdefault("tool_usage", {})
                breakdown = meta.setdefault("activity_breakdown", dict.fromkeys(_ACTIVITY_KEYS, 0))
                for session_id, tool_name, now in uses:
                    if session.get("id") != session_id:
                        continue
                    last = parse_iso(session.get("last_activity") or session.get("start") or iso(now))
                    gap = now - last
                    if gap > INACTIVITY_GAP:
                        pause = {"start": iso(last), "end": iso(now), "reason": "auto_inactive"}
                        timing.setdefault("pauses", []).append(pause)
                        timing["pause_minutes"] = int(timing.get("pause_minutes", 0)) + round(gap.total_seconds() / 60)
                    else:
                        seconds = float(timing.get("active_seconds", 0)) + max(0.0, gap.total_seconds())
                        timing["active_seconds"] = seconds
                        timing["active_minutes"] = round(seconds / 60)
                    session["last_activity"] = iso(now)
                    usage[tool_name] = int(usage.get(tool_name, 0)) + 1
                    kind = _activity_of(tool_name)
                    breakdown[kind] = int(breakdown.get(kind, 0)) + 1
                    if now - parse_iso(session.get("last_heartbeat") or iso(now)) >= HEARTBEAT_EVERY:
                        session["last_heartbeat"] = iso(now)
                        session["lock_expires"] = iso(now + LOCK_TTL)
                        renew = (session_id, now)
                    counted += 1
                if counted:
                    self._write_session_json(meta)
            if renew is not None:
                self._heartbeat_lock(*renew)
            return counted

    def _heartbeat_lock(self, session_id: str, now: datetime) -> None:
        with file_lock(self._paths.locks_dir, "workspace-lock"):
            lock = self._read_lock()
            if lock is None or lock.session_id != session_id:
                return
            renewed = LockInfo(lock.agent_id, lock.session_id, lock.acquired_at, now + LOCK_TTL, now, lock.pid)
            atomic_write_text(self._paths.workspace_lock, renewed.to_json())

    # ------------------------------------------------------------------ status
    def status(self) -> WorkspaceStatus:
        self._require_folder()
        self.flush_tool_uses()
        now = self._clock.now()
        lock = self._read_lock()
        current = self._read_current()
        if current is None:
            return WorkspaceStatus(
                active=False,
                lock=lock,
                lock_stale=lock.is_stale(now) if lock else False,
            )
        data = current.data
        meta = self._read_session_json() or {}
        start = _parse_optional(data.get("session_start"))
        timing = meta.get("timing", {})
        entries = len(re.findall(r"^\S+ \[\d{2}:\d{2}:\d{2}\] ", current.body, re.MULTILINE))
        return WorkspaceStatus(
            active=True,
            task=_str_or_none(data.get("task")),
            agent_id=_str_or_none(data.get("agent_id")),
            session_id=_str_or_none(data.get("session_id")),
            session_start=start,
            last_active=_parse_optional(data.get("last_active")),
            lock=lock,
            lock_stale=lock.is_stale(now) if lock else False,
            session_minutes=round((now - start).total_seconds() / 60) if start else 0,
            active_minutes=int(timing.get("active_minutes", 0)),
            entries=entries,
            tool_calls=sum(int(v) for v in meta.get("tool_usage", {}).values()),
        )

    # ------------------------------------------------------------------ session log
    def log(self, entry: str, entry_type: str = "progress") -> Logged:
        entry = entry.strip()
        if not entry:
            raise InvalidArgumentError("entry must not be empty: write what happened")
        if entry_type not in LOG_TYPES:
            raise InvalidArgumentError(f"type must be one of {', '.join(LOG_TYPES)}; got {entry_type!r}")
        self._require_folder()
        now = self._clock.now()
        cleaned = redact(entry)
        if not self.log_line(LOG_ICONS[entry_type], cleaned.text):
            raise NoWorkspaceError("No active workspace. Use dokoro_workspace_claim first.")
        return Logged(now, cleaned.kinds)

    # ------------------------------------------------------------------ dump
    def dump(
        self,
        reason: str,
        *,
        keep_active: bool = True,
        status: str = "active",
        doc_type: str = "session",
        acting_agent: str | None = None,
    ) -> DumpResult:
        """Save the workspace to a daily file and a docs row; optionally end the session.

        ``acting_agent`` is the authenticated caller: only the agent holding the workspace may
        dump it (and so release its lock).
        """
        if status not in DUMP_STATUSES:
            raise InvalidArgumentError(f"status must be one of {', '.join(DUMP_STATUSES)}; got {status!r}")
        if doc_type not in DOC_TYPES:
            raise InvalidArgumentError(f"docType must be one of {', '.join(DOC_TYPES)}; got {doc_type!r}")
        reason = reason.strip()
        if not reason:
            raise InvalidArgumentError("reason must not be empty: say why the session is being dumped")
        self._require_folder()
        self.flush_tool_uses()
        now = self._clock.now()
        with file_lock(self._paths.locks_dir, _CURRENT_LOCK):
            text = read_text_or_none(self._paths.current_md)
            if text is None:
                raise NoWorkspaceError("Nothing to dump: no active workspace. Use dokoro_workspace_claim first.")
            data, _body = frontmatter.parse(text)
            task = str(data.get("task") or "session")
            agent_id = str(data.get("agent_id") or "unknown")
            session_id = str(data.get("session_id") or "")
            if acting_agent is not None and acting_agent != agent_id:
                raise ConflictError(
                    f"The workspace is held by {agent_id}; you are {acting_agent}. Only the holder can dump "
                    "or release it — claim it yourself with dokoro_workspace_claim(force=true) if it is abandoned."
                )
            meta = self._finalise_session_meta(now, close=not keep_active)
            start = _parse_optional(data.get("session_start"))
            duration = round((now - start).total_seconds() / 60) if start else 0

            path = self._unique_daily_path(f"{slug(now)}-session-{_topic(task)}")
            content = self._render_dump(now, task, agent_id, reason, status, doc_type, data, text, meta, duration)
            atomic_write_text(path, content)
            relative = self._paths.relative(path)

            released = False
            if keep_active:
                link = f"Session dumped to: [{path.name}]({relative})"
                updated, count = _PROGRESS_HEADING.subn(lambda m: f"{m.group(0)}\n{link}", text, count=1)
                atomic_write_text(self._paths.current_md, updated if count else text + f"\n{link}\n")
            else:
                released = self._release_lock(session_id)
                self._paths.current_md.unlink(missing_ok=True)
                if session_id == self._claimed_session:
                    self._claimed_session = None

        doc_indexed = self._upsert_doc(path.stem, relative, f"Session: {task}", content, doc_type, status, now)
        claims_released = 0 if keep_active else self._release_session_claims(session_id)
        return DumpResult(
            path, relative, path.stem, status, doc_type, reason, duration, released, doc_indexed, claims_released
        )

    def _release_session_claims(self, session_id: str) -> int:
        # Best effort: the session is already dumped and ended; a claim left behind expires on its TTL.
        if self.release_claims is None or not session_id:
            return 0
        try:
            return self.release_claims(session_id)
        except (SQLAlchemyError, DokoroError):
            log.warning("dokoro: could not release the file claims of session %s", session_id, exc_info=True)
            return 0

    @property
    def claimed_session(self) -> str | None:
        """The workspace session this process claimed and has not ended, if any."""
        return self._claimed_session

    def _unique_daily_path(self, stem: str) -> Path:
        """A daily file name free both here and in the database: on a team database another
        developer's dump of the same task in the same minute has the same name (and doc id)."""
        self._paths.daily_dir.mkdir(parents=True, exist_ok=True)
        candidate = self._paths.daily_dir / f"{stem}.md"
        counter = 2

        def taken_in_database(doc_id: str) -> bool:
            # Best effort, like the dump's indexing: an unreachable database must not stop the
            # daily file from being written.
            try:
                with self._db.read() as session:
                    return session.get(Doc, doc_id) is not None
            except SQLAlchemyError:
                return False

        while candidate.exists() or taken_in_database(candidate.stem):
            candidate = self._paths.daily_dir / f"{stem}-{counter}.md"
            counter += 1
        return candidate

    def _finalise_session_meta(self, now: datetime, *, close: bool) -> dict[str, Any] | None:
        with file_lock(self._paths.locks_dir, "session-json"):
            meta = self._read_session_json()
            if meta is None:
                return None
            session = meta.setdefault("session", {})
            start = _parse_optional(session.get("start"))
            timing = meta.setdefault("timing", {})
            timing["total_minutes"] = round((now - start).total_seconds() / 60) if start else 0
            if close:
                session["end"] = iso(now)
                self._write_session_json(meta)
            return meta

    def _release_lock(self, session_id: str) -> bool:
        with file_lock(self._paths.locks_dir, "workspace-lock"):
            lock = self._read_lock()
            if lock is None or lock.session_id != session_id:
                return False
            self._paths.workspace_lock.unlink(missing_ok=True)
            return True

    def _render_dump(
        self,
        now: datetime,
        task: str,
        agent_id: str,
        reason: str,
        status: str,
        doc_type: str,
        data: dict[str, Any],
        current_text: str,
        meta: dict[str, Any] | None,
        duration: int,
    ) -> str:
        breakdown: dict[str, int] = (meta or {}).get("activity_breakdown", {})
        scope = [kind for kind, count in breakdown.items() if int(count) > 0] or ["general"]
        front: dict[str, Any] = {
            "title": f"Session: {task}",
            "date": iso(now),
            "agent_id": agent_id,
            "dump_reason": reason,
        }
        if meta is not None:
            front["session_start"] = data.get("session_start")
            front["session_end"] = iso(now)
            front["duration_minutes"] = duration
            front["duration_hours"] = round(duration / 60, 1)
        front["status"] = status
        front["docType"] = doc_type
        front["tags"] = {
            "type": doc_type,
            "scope": scope,
            "status": status,
            "focus": _topic(task),
            "duration": format_duration(duration),
        }
        lines = [
            frontmatter.render(front),
            f"# Session: {task}",
            "",
            f"**Date:** {now:%Y-%m-%d} ({now:%A})",
            f"**Time:** {now:%H:%M} UTC",
            f"**Agent:** {agent_id}",
            f"**Reason:** {reason}",
            "",
            "## Workspace Content at Time of Dump",
            "",
            frontmatter.split(current_text)[1].strip(),
            "",
        ]
        if meta is not None:
            lines.extend(_analytics_block(meta, duration))
        return "\n".join(lines) + "\n"

    def _upsert_doc(
        self, doc_id: str, relative: str, title: str, content: str, doc_type: str, status: str, now: datetime
    ) -> bool:
        import hashlib

        values = {
            "id": doc_id,
            "filepath": relative,
            "title": title,
            "content": content,
            "doc_type": doc_type,
            "status": status,
            "priority": "medium",
            "created_at": now,
            "updated_at": now,
            "content_hash": hashlib.sha256(content.encode()).hexdigest(),
        }
        update = [k for k in values if k not in ("id", "created_at")]
        # Best effort, as in the reference: the daily file is already written (and the lock maybe
        # released), so a database failure here must not turn a done dump into an error.
        try:
            with self._db.write() as session:
                session.execute(self._db.ops.upsert(Doc.__table__, values, ["id"], update))  # type: ignore[arg-type]
        except (SQLAlchemyError, StoreUnavailableError):
            log.warning("dokoro: could not index the dump %s as a document", relative, exc_info=True)
            return False
        if self.after_doc_saved is not None:
            try:
                self.after_doc_saved(doc_id)
            except (SQLAlchemyError, DokoroError, OSError):
                log.warning("dokoro: could not add the dump %s to the search index", relative, exc_info=True)
        return True


def _analytics_block(meta: dict[str, Any], duration: int) -> list[str]:
    timing = meta.get("timing", {})
    usage: dict[str, int] = meta.get("tool_usage", {})
    top = sorted(usage.items(), key=lambda item: (-int(item[1]), item[0]))[:5]
    lines = [
        "## 📊 Session Analytics",
        "",
        f"- **Duration:** {format_duration(duration)} (active {format_duration(int(timing.get('active_minutes', 0)))})",
        f"- **Pauses:** {len(timing.get('pauses', []))}",
        f"- **Tool calls:** {sum(int(v) for v in usage.values())}",
    ]
    if top:
        lines.append("- **Top tools:** " + ", ".join(f"{name} ({count})" for name, count in top))
    breakdown: dict[str, int] = meta.get("activity_breakdown", {})
    busy = [(kind, int(count)) for kind, count in breakdown.items() if int(count) > 0]
    if busy:
        lines.append("- **Activity:** " + ", ".join(f"{kind} {count} calls" for kind, count in busy))
    lines.append("")
    return lines


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
