"""A bulk import of memories (a backup, another memory system, a benchmark): the drafts and their rows.

No conflict gate runs on an import: imported memories are trusted as given (``trust`` defaults to
``imported``); secrets are still redacted. :meth:`~.service.MemoryService.remember_many` writes the
rows in one transaction (:func:`~.repository.create_many`) and indexes their documents in one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.rows import MEMORY_TYPES
from dokoro_store.walls.secrets import redact_all

__all__ = ["MemoryDraft", "draft_rows"]


@dataclass(frozen=True)
class MemoryDraft:
    """One memory of a bulk import."""

    type: str
    title: str
    body: str
    entities: Sequence[str] = ()
    trust: str = "imported"
    agent_id: str | None = None
    source: str | None = None
    created_at: datetime | None = None
    # A conversation or log the memory is one entry of, and its place in it: recall lifts the
    # neighbours of a match (the search engine's thread neighbours).
    thread: str | None = None
    thread_pos: int | None = None


def draft_rows(
    drafts: Sequence[MemoryDraft], now: datetime, entities: Callable[[Sequence[str] | None], list[str]]
) -> list[MemoryRow]:
    """The rows of the drafts (checked, redacted; nothing written); ``entities``: as stored."""
    rows: list[MemoryRow] = []
    for draft in drafts:
        if draft.type not in MEMORY_TYPES:
            raise InvalidArgumentError(f"type must be one of {', '.join(MEMORY_TYPES)}; got {draft.type!r}")
        (title, body), _kinds = redact_all([draft.title.strip(), draft.body.strip()])
        if not title or not body:
            raise InvalidArgumentError("every memory needs a title and a body")
        rows.append(
            MemoryRow(
                id=repository.new_id(now),
                type=draft.type,
                title=str(title)[:300],
                body=str(body),
                entities=entities(draft.entities),
                trust=draft.trust,
                agent_id=draft.agent_id,
                source=draft.source,
                created_at=draft.created_at or now,
                updated_at=draft.created_at or now,
            )
        )
    return rows
