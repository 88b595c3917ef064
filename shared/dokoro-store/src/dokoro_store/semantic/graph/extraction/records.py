"""What an extractor returns: entities with their spans, relations between them, and the vocabulary."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = [
    "ENTITY_TYPES",
    "MENTIONS",
    "RELATION_TYPES",
    "EntityType",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "canonicalise",
]

EntityType = Literal["person", "project", "file", "service", "component", "concept"]
ENTITY_TYPES: tuple[EntityType, ...] = ("person", "project", "file", "service", "component", "concept")

MENTIONS = "mentions"
# Every relation type an extractor may produce ("mentions" links an entity to its document).
RELATION_TYPES: tuple[str, ...] = (MENTIONS, "implements", "depends_on", "blocks", "authored_by", "superseded_by")


def canonicalise(entity_type: str, name: str) -> str:
    """The identity of a name within its type: files lose a leading ``./``, people their ``@``,
    concepts their ``#``; everything is lower-cased and trimmed."""
    value = name.strip()
    if entity_type == "file" and value.startswith("./"):
        value = value[2:]
    elif entity_type == "person":
        value = value.lstrip("@")
    elif entity_type == "concept":
        value = value.lstrip("#")
    return value.strip().lower()


@dataclass(frozen=True)
class ExtractedEntity:
    """One entity found in a text. ``start``/``end`` are -1 when the entity has no span (LLM)."""

    type: EntityType
    name: str
    canonical: str
    confidence: float
    start: int = -1
    end: int = -1
    context: str = ""
    description: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.type, self.canonical)

    def with_confidence(self, confidence: float) -> ExtractedEntity:
        return replace(self, confidence=confidence)


@dataclass(frozen=True)
class ExtractedRelation:
    """A typed edge between two extracted entities, named by their (type, canonical) keys."""

    source: tuple[str, str]
    target: tuple[str, str]
    type: str
    confidence: float
    evidence: str = ""

    @property
    def key(self) -> tuple[tuple[str, str], tuple[str, str], str]:
        return (self.source, self.target, self.type)

    def with_confidence(self, confidence: float) -> ExtractedRelation:
        return replace(self, confidence=confidence)


@dataclass(frozen=True)
class Extraction:
    """Entities and relations of one text, and how they were found (``regex``, ``hybrid``, ``regex-only``)."""

    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    source: str = "regex"
    model: str | None = None
    warning: str | None = None

    def entity(self, key: tuple[str, str]) -> ExtractedEntity | None:
        for entity in self.entities:
            if entity.key == key:
                return entity
        return None
