"""What an importer found (documents with their entity and links), and writing it into a store."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from dokoro_store.errors import NotFoundError
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.semantic.graph.extraction import (
    ENTITY_TYPES,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    canonicalise,
    extract_regex,
    merge,
)

if TYPE_CHECKING:
    from dokoro_store.store import Store

__all__ = [
    "ImportOutcome",
    "ImportSet",
    "ImportedNote",
    "apply_import_set",
    "entity_type_of",
    "preview_of",
    "relation_type_of",
    "slug_of",
]

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def slug_of(text: str, limit: int = 80) -> str:
    return _NOT_SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-") or "untitled"


def relation_type_of(text: str) -> str | None:
    """A relation name as the graph keeps it (lower_snake_case: ``worksAt``, ``works at`` → ``works_at``)."""
    snake = _NOT_SLUG.sub("_", _CAMEL.sub("_", text.strip()).lower()).strip("_")
    if not snake or not snake[0].isalpha():
        return None
    return snake[:60]


def entity_type_of(text: str | None) -> str:
    """The graph type of a source's entity type: one of ours when it names one, else ``concept``."""
    lowered = (text or "").strip().lower()
    return lowered if lowered in ENTITY_TYPES else "concept"


@dataclass
class ImportedNote:
    """One document an importer found, the entity it is about, and its links to other entities."""

    doc_id: str
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


@dataclass
class ImportSet:
    """What a source holds, read and checked; nothing written yet."""

    source: str
    format: str  # "mcp-memory" | "notes"
    notes: list[ImportedNote] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def relations(self) -> int:
        return sum(len(note.links) for note in self.notes)

    @property
    def entities(self) -> int:
        keys = {(n.entity_type, canonicalise(n.entity_type, n.entity_name)) for n in self.notes}
        keys |= {(t, canonicalise(t, name)) for n in self.notes for _r, t, name in n.links}
        return len(keys)


@dataclass(frozen=True)
class ImportOutcome:
    new: int  # documents created
    changed: int  # documents whose text changed since an earlier import
    unchanged: int  # documents already there as they are
    entities: int
    relations: int


def preview_of(store: Store, items: ImportSet) -> ImportOutcome:
    """What :func:`apply_import_set` would do to ``store`` (nothing written)."""
    new = changed = unchanged = 0
    for note in items.notes:
        try:
            doc = store.docs.get(note.doc_id)
        except NotFoundError:  # a new document
            new += 1
            continue
        if doc.content_hash == content_hash(note.content):
            unchanged += 1
        else:
            changed += 1
    return ImportOutcome(new, changed, unchanged, items.entities, items.relations)


def _extraction(note: ImportedNote) -> Extraction:
    """The note's own graph (its entity, its links), merged with what the regex extractor finds in it."""
    me = ExtractedEntity(note.entity_type, note.entity_name, canonicalise(note.entity_type, note.entity_name), 1.0)  # type: ignore[arg-type]
    entities = {me.key: me}
    relations: list[ExtractedRelation] = []
    for relation_type, target_type, target in note.links:
        other = ExtractedEntity(target_type, target, canonicalise(target_type, target), 1.0)  # type: ignore[arg-type]
        if other.key == me.key:
            continue
        entities.setdefault(other.key, other)
        relations.append(ExtractedRelation(me.key, other.key, relation_type, 1.0, f"{note.title}: {relation_type}"))
    mine = Extraction(entities=list(entities.values()), relations=relations, source="import")
    return merge(extract_regex(note.content), mine)


def apply_import_set(store: Store, items: ImportSet) -> ImportOutcome:
    """Write the documents (indexed for search) and their entities and relations; a second run
    changes nothing (unchanged documents are skipped, open relations are not recorded twice)."""
    outcome = preview_of(store, items)
    changed_ids: list[str] = []
    for note in items.notes:
        try:
            existing = store.docs.get(note.doc_id)
            if existing.content_hash == content_hash(note.content):
                continue
        except NotFoundError:  # a new document
            pass
        store.docs.save(
            note.doc_id,
            note.content,
            title=note.title,
            filepath=note.filepath,
            doc_type="note",
            metadata={"imported_from": items.format, "source_type": note.kind, "tags": note.tags},
        )
        changed_ids.append(note.doc_id)
    if changed_ids:
        store.docs.index_docs(changed_ids)
        store.graph.complete_pending(changed_ids)
    wanted = set(changed_ids)
    for note in items.notes:
        if note.doc_id in wanted:
            store.graph.persist(note.doc_id, _extraction(note), valid_from=note.written)
    return outcome
