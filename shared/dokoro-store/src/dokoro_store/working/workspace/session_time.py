"""Time tracking of the claimed workspace session: ``.mcp/session.json`` (reference §2.1).

Active time accrues between tool calls less than five minutes apart; a longer silence is
recorded as an ``auto_inactive`` pause. Calls are counted by tool and by kind of activity
(coding, testing, research, planning, other) for the dump's analytics. Every read-modify-write
runs under the ``session-json`` file lock.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from dokoro_store.clock import iso, parse_iso
from dokoro_store.paths import StorePaths
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none
from dokoro_store.working.lock import LOCK_TTL, LockInfo

__all__ = ["HEARTBEAT_EVERY", "INACTIVITY_GAP", "SessionTime", "activity_of"]

# A tool call after this much silence starts a new stretch of activity; the gap is a pause.
INACTIVITY_GAP = timedelta(minutes=5)
# Renewing the lock on every tool call would rewrite it constantly; once a minute is plenty.
HEARTBEAT_EVERY = timedelta(minutes=1)

_LOCK = "session-json"
_ACTIVITY_KEYS = ("coding", "testing", "research", "planning", "other")
_ACTIVITY_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("coding", ("edit", "write", "multiedit", "notebookedit", "save_file", "save_image")),
    ("testing", ("bash", "eslint", "todowrite", "test")),
    ("research", ("read", "grep", "search", "recall", "webfetch", "perplexity", "graph", "list", "status")),
    ("planning", ("think", "plan", "whats_next", "question")),
)


def activity_of(tool_name: str) -> str:
    """The kind of activity a tool call counts as (by substrings of its name)."""
    lowered = tool_name.lower()
    for kind, needles in _ACTIVITY_RULES:
        if any(needle in lowered for needle in needles):
            return kind
    return "other"


def _parse_optional(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_iso(str(value))
    except ValueError:
        return None


class SessionTime:
    """The session metadata file of one store folder."""

    def __init__(self, paths: StorePaths) -> None:
        self._paths = paths

    def read(self) -> dict[str, Any] | None:
        text = read_text_or_none(self._paths.session_json, within=self._paths.root)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        return data if isinstance(data, dict) else None

    def _write(self, data: dict[str, Any]) -> None:
        atomic_write_text(
            self._paths.session_json, json.dumps(data, indent=2, ensure_ascii=False), within=self._paths.root
        )

    def start(self, lock: LockInfo) -> None:
        """Begin tracking the session ``lock`` was just taken for (replaces any previous one)."""
        meta = {
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
        with file_lock(self._paths.locks_dir, _LOCK, within=self._paths.root):
            self._write(meta)

    def record(self, uses: Sequence[tuple[str, str, datetime]]) -> tuple[int, tuple[str, datetime] | None]:
        """Count tool calls ``(session_id, tool_name, when)``, in one read and one write of the file.

        Returns how many counted and, when the lock is due a heartbeat, ``(session_id, when)``.
        A call counts only toward the current session: nothing is recorded when the file is
        gone, the session ended or another session replaced it.
        """
        if not uses or not self._paths.session_json.exists():
            return 0, None
        counted = 0
        heartbeat: tuple[str, datetime] | None = None
        with file_lock(self._paths.locks_dir, _LOCK, within=self._paths.root):
            meta = self.read()
            if meta is None or meta.get("session", {}).get("end"):
                return 0, None
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
                    timing.setdefault("pauses", []).append(
                        {"start": iso(last), "end": iso(now), "reason": "auto_inactive"}
                    )
                    timing["pause_minutes"] = int(timing.get("pause_minutes", 0)) + round(gap.total_seconds() / 60)
                else:
                    seconds = float(timing.get("active_seconds", 0)) + max(0.0, gap.total_seconds())
                    timing["active_seconds"] = seconds
                    timing["active_minutes"] = round(seconds / 60)
                session["last_activity"] = iso(now)
                usage[tool_name] = int(usage.get(tool_name, 0)) + 1
                kind = activity_of(tool_name)
                breakdown[kind] = int(breakdown.get(kind, 0)) + 1
                if now - parse_iso(session.get("last_heartbeat") or iso(now)) >= HEARTBEAT_EVERY:
                    session["last_heartbeat"] = iso(now)
                    session["lock_expires"] = iso(now + LOCK_TTL)
                    heartbeat = (session_id, now)
                counted += 1
            if counted:
                self._write(meta)
        return counted, heartbeat

    def finalise(self, now: datetime, *, close: bool) -> dict[str, Any] | None:
        """The session metadata with its total time as of ``now``; ``close`` ends the session (saved)."""
        with file_lock(self._paths.locks_dir, _LOCK, within=self._paths.root):
            meta = self.read()
            if meta is None:
                return None
            session = meta.setdefault("session", {})
            start = _parse_optional(session.get("start"))
            timing = meta.setdefault("timing", {})
            timing["total_minutes"] = round((now - start).total_seconds() / 60) if start else 0
            if close:
                session["end"] = iso(now)
                self._write(meta)
            return meta
