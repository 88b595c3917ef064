"""What an importer found: documents with their entity and links, what it skipped and why, and the
bounds every source is read within.

A source is a person's file or folder, so hostile input: each line or note is read within bounds
(:data:`MAX_LINE_BYTES`, :data:`MAX_NAME_CHARS`, :data:`MAX_LINKS`, :data:`MAX_OBSERVATIONS`),
text that no database can hold (a lone surrogate, a NUL) makes its line or note skipped with where
and why, and a reason never quotes the source's text (a token in a skipped line never reaches the
terminal: names in reasons are redacted and cut short).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from dokoro_store.semantic.graph.extraction import ENTITY_TYPES, canonicalise
from dokoro_store.walls.secrets import redact

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_LINKS",
    "MAX_NAME_CHARS",
    "MAX_OBSERVATIONS",
    "MAX_REASONS",
    "ImportSet",
    "ImportedNote",
    "bad_text",
    "entity_type_of",
    "relation_type_of",
    "shown_name",
]

# One line of a JSONL source; longer is skipped (a real entity line is a few kilobytes).
MAX_LINE_BYTES = 1024 * 1024
# An entity's or a note's name (the graph keeps names, not texts).
MAX_NAME_CHARS = 500
# Links of one document kept for the graph (the text keeps them all): past it, the rest are counted.
MAX_LINKS = 2_000
# Observations of one entity rendered into its document.
MAX_OBSERVATIONS = 5_000
# Skipped reasons kept word for word; past it, only counted.
MAX_REASONS = 200

_NOT_SNAKE = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def relation_type_of(text: str) -> str | None:
    """A relation name as the graph keeps it (lower_snake_case: ``worksAt``, ``works at`` → ``works_at``)."""
    snake = _NOT_SNAKE.sub("_", _CAMEL.sub("_", text.strip()).lower()).strip("_")
    if not snake or not snake[0].isalpha():
        return None
    return snake[:60]


def entity_type_of(text: str | None) -> str:
    """The graph type of a source's entity type: one of ours when it names one, else ``concept``."""
    lowered = (text or "").strip().lower()
    return lowered if lowered in ENTITY_TYPES else "concept"


def bad_text(text: str) -> str | None:
    """Why ``text`` cannot be stored (a lone surrogate: not Unicode text; a NUL: PostgreSQL refuses
    it), or None."""
    if "\x00" in text:
        return "a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "a lone surrogate (not valid Unicode)"
    return None


def shown_name(name: str, limit: int = 60) -> str:
    """A name as a reason quotes it: secrets redacted, one line, cut short."""
    one_line = " ".join(redact(name.encode("utf-8", "replace").decode("utf-8")).text.split())
    return repr(one_line if len(one_line) <= limit else one_line[: limit - 1] + "…")


@dataclass
class ImportedNote:
    """One document an importer found, the entity it is about, and its links to other entities.

    ``key`` names it uniquely in its source (an entity's name, a note's path) and ``slug`` is the
    readable part of its id; ``doc_id`` is set when it is matched against a store
    (:func:`~.names.assign_ids`)."""

    key: str
    slug: str
    title: str
    content: str
    filepath: str
    entity_type: str
    entity_name: str
    # (relation type, target entity type, target name)
    links: list[tuple[str, str, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    written: datetime | None = None
    kind: str = "note"  # the source's own type (an entityType, a front-matter type)
    doc_id: str = ""


@dataclass
class ImportSet:
    """What a source holds, read and checked; nothing written yet."""

    source: str
    format: str  # "mcp-memory" | "notes"
    prefix: str  # of its documents' ids: "kg-" | "note-"
    notes: list[ImportedNote] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # the first MAX_REASONS reasons
    skipped_count: int = 0
    lines: int = 0  # lines (or files) read

    def skip(self, reason: str) -> None:
        """Count a skipped line or note; keep its reason (redacted) while there is room."""
        self.skipped_count += 1
        if len(self.skipped) < MAX_REASONS:
            self.skipped.append(redact(reason).text)

    @property
    def relations(self) -> int:
        return sum(len(note.links) for note in self.notes)

    @property
    def entities(self) -> int:
        keys = {(n.entity_type, canonicalise(n.entity_type, n.entity_name)) for n in self.notes}
        keys |= {(t, canonicalise(t, name)) for n in self.notes for _r, t, name in n.links}
        return len(keys)
