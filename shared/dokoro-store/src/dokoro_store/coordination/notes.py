"""Shared notes: an append-only scratchpad every agent of the store reads (reference §2.8)."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from dokoro_store.clock import Clock, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import SharedNote
from dokoro_store.results.coordination import Note
from dokoro_store.walls.names import required_name

__all__ = ["MAX_NOTE", "NOTE_TYPES", "NoteService"]

NOTE_TYPES = ("scratch", "decision", "blocker", "handoff")
MAX_NOTE = 20000


class NoteService:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def append(
        self, agent_id: str, content: str, *, note_type: str = "scratch", metadata: dict[str, Any] | None = None
    ) -> Note:
        agent_id = required_name(agent_id, "agent_id")
        if not content or not content.strip():
            raise InvalidArgumentError("content must not be empty: write the note")
        if len(content) > MAX_NOTE:
            raise InvalidArgumentError(f"content is {len(content)} characters; at most {MAX_NOTE}")
        if note_type not in NOTE_TYPES:
            raise InvalidArgumentError(f"note_type must be one of {', '.join(NOTE_TYPES)}; got {note_type!r}")
        note = SharedNote(
            agent_id=agent_id,
            content=content.strip(),
            note_type=note_type,
            metadata_json=metadata or None,
            created_at=self._clock.now(),
        )
        with self._db.write() as session:
            session.add(note)
            session.flush()
            return _note(note)

    def read(
        self,
        *,
        agent_id: str | None = None,
        note_type: str | None = None,
        since: str | None = None,
        limit: int = 50,
    ) -> list[Note]:
        """Notes newest first, optionally by one agent, of one type, or since a time."""
        if not 1 <= limit <= 200:
            raise InvalidArgumentError(f"limit must be between 1 and 200; got {limit}")
        if note_type is not None and note_type not in NOTE_TYPES:
            raise InvalidArgumentError(f"note_type must be one of {', '.join(NOTE_TYPES)}; got {note_type!r}")
        statement = select(SharedNote)
        if agent_id is not None and agent_id.strip():
            statement = statement.where(SharedNote.agent_id == agent_id.strip())
        if note_type is not None:
            statement = statement.where(SharedNote.note_type == note_type)
        if since is not None and since.strip():
            try:
                statement = statement.where(col(SharedNote.created_at) >= parse_iso(since))
            except ValueError as exc:
                raise InvalidArgumentError(f"since: {exc}") from None
        statement = statement.order_by(col(SharedNote.created_at).desc(), col(SharedNote.id).desc()).limit(limit)
        with self._db.read() as session:
            return [_note(row) for row in session.exec(statement)]


def _note(row: SharedNote) -> Note:
    assert row.id is not None  # flushed
    return Note(
        id=row.id,
        agent_id=row.agent_id,
        note_type=row.note_type,
        content=row.content,
        created_at=row.created_at,
        metadata=row.metadata_json,
    )
