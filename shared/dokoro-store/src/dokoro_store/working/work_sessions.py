"""Work sessions a person opens and closes from the command line (``dokoro session start|end|status``).

They are rows of ``sessions``, the table episodic memory files summaries under, marked
``{"kind": "person"}`` in their metadata (agents' sessions are created by their summaries and are
never "active" there). Ending one with a summary files that summary as episodic memory, so an
agent's ``dokoro_session_recall`` finds what the person wrote.
"""

from __future__ import annotations

import math
import secrets

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.episodic.service import EpisodicService
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc, EpisodeSession
from dokoro_store.results.board import WorkSession, WorkSessionStatus

__all__ = ["SESSION_MODEL", "WorkSessions"]

# The ``ai_model`` of the episodic summary a person writes when ending a session.
SESSION_MODEL = "human"
_KIND = "person"
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
MAX_SUMMARY = 20_000


def _view(row: EpisodeSession) -> WorkSession:
    meta = row.metadata_json or {}
    minutes = None
    if row.ended_at is not None:
        minutes = max(0, math.floor((row.ended_at - row.started_at).total_seconds() / 60 + 0.5))
    return WorkSession(
        id=row.id,
        status=row.status,
        started_at=row.started_at,
        ended_at=row.ended_at,
        duration_min=minutes,
        focus=meta.get("focus"),
        summary=meta.get("summary"),
    )


class WorkSessions:
    def __init__(self, db: Database, clock: Clock, episodic: EpisodicService) -> None:
        self._db = db
        self._clock = clock
        self._episodic = episodic

    def _mine(self) -> list[EpisodeSession]:
        with self._db.read() as session:
            rows = session.exec(
                select(EpisodeSession)
                .where(col(EpisodeSession.metadata_json).is_not(None))
                .order_by(col(EpisodeSession.started_at).desc(), col(EpisodeSession.id).desc())
            )
            return [row for row in rows if (row.metadata_json or {}).get("kind") == _KIND]

    def start(self, focus: str | None = None) -> WorkSession:
        """Open a session, optionally about one document (``focus``, a document id)."""
        now = self._clock.now()
        suffix = "".join(secrets.choice(_ALPHABET) for _ in range(6))
        row = EpisodeSession(
            id=f"session-{int(now.timestamp() * 1000)}-{suffix}",
            started_at=now,
            status="active",
            metadata_json={"kind": _KIND, "focus": (focus or "").strip() or None},
        )
        with self._db.write() as session:
            if (
                row.metadata_json
                and row.metadata_json["focus"]
                and session.get(Doc, row.metadata_json["focus"]) is None
            ):
                raise NotFoundError(f"no document {focus!r} to focus on; list ids with `dokoro list`")
            session.add(row)
        return _view(row)

    def end(self, summary: str | None = None, *, session_id: str | None = None) -> WorkSession:
        """Close the newest active session (or ``session_id``); a summary becomes episodic memory."""
        text = (summary or "").strip()
        if len(text) > MAX_SUMMARY:
            raise InvalidArgumentError(f"the summary is {len(text)} characters; at most {MAX_SUMMARY}")
        active = [row for row in self._mine() if row.status == "active"]
        if session_id is not None:
            active = [row for row in active if row.id == session_id.strip()]
        if not active:
            which = f"session {session_id!r}" if session_id else "session"
            raise NotFoundError(f"no active {which} to end; start one with `dokoro session start`")
        now = self._clock.now()
        with self._db.write() as session:
            row = session.get(EpisodeSession, active[0].id, with_for_update=True)
            if row is None or row.status != "active":
                raise ConflictError(f"session {active[0].id} was ended meanwhile")
            row.status = "completed"
            row.ended_at = now
            row.metadata_json = {**(row.metadata_json or {}), "summary": text or None}
            session.add(row)
        if text:
            self._episodic.add_summary(row.id, SESSION_MODEL, text)
        return _view(row)

    def status(self) -> WorkSessionStatus:
        rows = self._mine()
        ended = [row for row in rows if row.status != "active" and row.ended_at is not None]
        ended.sort(key=lambda r: r.ended_at or r.started_at, reverse=True)
        return WorkSessionStatus(
            active=[_view(row) for row in rows if row.status == "active"],
            last_ended=_view(ended[0]) if ended else None,
        )
