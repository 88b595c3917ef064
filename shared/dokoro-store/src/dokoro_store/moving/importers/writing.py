"""Writing what an importer found into a store: in batches, resumable, counting what was written.

Each note is matched against the store first (its document id, :mod:`.names`: a name another
document already holds gets an id of its own). Then, a batch of :data:`BATCH` notes at a time:

1. the documents already there with the same text are left alone (``unchanged``);
2. the graph of the others — their entity, their links, what the regex extractor finds in their
   text — is written with their extraction hashes, in one transaction (the indexing's own regex
   pass then skips them);
3. their documents are saved in one transaction: **a document there is a document whose graph is
   written**, so the batch's documents are its mark;
4. they are indexed (full text, vectors), and so are documents of the batch an earlier run saved
   but did not index.

A run stopped anywhere (Ctrl-C, a kill, a lost connection) leaves whole batches and at most one
batch's graph without its documents: the next run finds the batches written as ``unchanged`` and
writes the rest, that graph again (upserts: nothing doubles). The outcome counts what this run
wrote: documents new and changed, entities and relations recorded, documents indexed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from dokoro_store.models.index import docs_table
from dokoro_store.moving.importers.items import ImportedNote, ImportSet
from dokoro_store.moving.importers.names import assign_ids
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.semantic.documents.records import NewDocument
from dokoro_store.semantic.graph.extraction import (
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    canonicalise,
    extract_regex,
    merge,
)
from dokoro_store.walls.secrets import redact

if TYPE_CHECKING:
    from dokoro_store.store import Store

__all__ = ["BATCH", "ImportOutcome", "Progress", "apply_import_set", "preview_of"]

# Notes written per batch: one graph transaction, one documents transaction, one indexing pass.
BATCH = 500
_IN = 500  # ids per IN (...) lookup

Progress = Callable[[int, int], None]  # (notes done, notes in all)


@dataclass
class ImportOutcome:
    """What an import would do (:func:`preview_of`) or did (:func:`apply_import_set`)."""

    new: int = 0  # documents created
    changed: int = 0  # documents whose text changed since an earlier import
    unchanged: int = 0  # documents already there as they are
    entities: int = 0  # distinct entities (previewed: named; applied: recorded)
    relations: int = 0  # relations (previewed: found; applied: newly recorded)
    indexed: int = 0  # documents indexed (applied; previewed: documents there but not indexed yet)
    skipped: int = 0  # lines or notes skipped (their reasons are on the import set)


def _stored(note: ImportedNote) -> str:
    """The note's text as the store keeps it (secrets redacted), which its hashes are of."""
    return redact(note.content).text


def _match(store: Store, items: ImportSet) -> None:
    """Give every note its document id (:func:`~.names.assign_ids`) against this store."""
    if items.notes and all(note.doc_id for note in items.notes):
        return
    docs = docs_table
    notes_prefix = f"{items.format}://"

    def holders(ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with store.db.read() as session:
            for start in range(0, len(ids), _IN):
                rows = session.execute(
                    select(docs.c.id, docs.c.title, docs.c.filepath).where(docs.c.id.in_(ids[start : start + _IN]))
                )
                for doc_id, title, filepath in rows:
                    found[str(doc_id)] = _key_of(items, str(title or ""), str(filepath or ""), notes_prefix)
        return found

    ids = assign_ids(items.prefix, [(note.key, note.slug) for note in items.notes], holders)
    for note, doc_id in zip(items.notes, ids, strict=True):
        note.doc_id = doc_id


def _key_of(items: ImportSet, title: str, filepath: str, prefix: str) -> str:
    """The key of the name a stored document is about: an entity's name (its title), a note's path
    within its folder (its file path after ``notes://<folder>/``)."""
    if items.format == "notes":
        return filepath.split("/", 3)[3] if filepath.startswith("notes://") and filepath.count("/") >= 3 else filepath
    return title


def _hashes(store: Store, ids: Sequence[str]) -> dict[str, str | None]:
    """The stored content hash of each of ``ids`` that is a document."""
    docs = docs_table
    with store.db.read() as session:
        rows = session.execute(select(docs.c.id, docs.c.content_hash).where(docs.c.id.in_(list(ids))))
        return {str(doc_id): digest for doc_id, digest in rows}


def preview_of(store: Store, items: ImportSet) -> ImportOutcome:
    """What :func:`apply_import_set` would do to ``store`` (nothing written)."""
    _match(store, items)
    outcome = ImportOutcome(entities=items.entities, relations=items.relations, skipped=items.skipped_count)
    for start in range(0, len(items.notes), _IN):
        batch = items.notes[start : start + _IN]
        there = _hashes(store, [note.doc_id for note in batch])
        same: list[str] = []
        for note in batch:
            if note.doc_id not in there:
                outcome.new += 1
            elif there[note.doc_id] == content_hash(_stored(note)):
                same.append(note.doc_id)
            else:
                outcome.changed += 1
        outcome.unchanged += len(same)
        if same:
            outcome.indexed += len(store.docs.pending(only=same))
    return outcome


def _extraction(note: ImportedNote, text: str) -> Extraction:
    """The note's own graph (its entity, its links), merged with what the regex extractor finds in
    it. A name with nothing left to name an entity by (``#`` alone, blank) is no entity: its text
    stays searchable."""
    found = extract_regex(text)
    me_key = canonicalise(note.entity_type, note.entity_name)
    if not me_key:
        return found
    me = ExtractedEntity(note.entity_type, note.entity_name, me_key, 1.0)  # type: ignore[arg-type]
    entities = {me.key: me}
    relations: list[ExtractedRelation] = []
    for relation_type, target_type, target in note.links:
        canonical = canonicalise(target_type, target)
        if not canonical:
            continue
        other = ExtractedEntity(target_type, target, canonical, 1.0)  # type: ignore[arg-type]
        if other.key == me.key:
            continue
        entities.setdefault(other.key, other)
        relations.append(ExtractedRelation(me.key, other.key, relation_type, 1.0, f"{note.title}: {relation_type}"))
    mine = Extraction(entities=list(entities.values()), relations=relations, source="import")
    return merge(found, mine)


def apply_import_set(store: Store, items: ImportSet, *, progress: Progress | None = None) -> ImportOutcome:
    """Write the documents (indexed for search) and their entities and relations, a batch at a time
    (module docstring); a rerun writes only what is not there yet."""
    _match(store, items)
    outcome = ImportOutcome(skipped=items.skipped_count)
    entity_ids: set[int] = set()
    total = len(items.notes)
    for start in range(0, total, BATCH):
        batch = items.notes[start : start + BATCH]
        there = _hashes(store, [note.doc_id for note in batch])
        texts = {note.doc_id: _stored(note) for note in batch}
        write = [note for note in batch if there.get(note.doc_id, "") != content_hash(texts[note.doc_id])]
        written = {note.doc_id for note in write}
        same = [note.doc_id for note in batch if note.doc_id not in written]
        outcome.unchanged += len(same)
        if write:
            persisted = store.graph.persist_texts(
                [(n.doc_id, texts[n.doc_id], _extraction(n, texts[n.doc_id]), n.written) for n in write]
            )
            for done in persisted:
                entity_ids.update(done.entity_ids.values())
                outcome.relations += done.relations_created
            store.docs.save_many([_document(items, note, texts[note.doc_id]) for note in write])
            outcome.new += sum(1 for note in write if note.doc_id not in there)
            outcome.changed += sum(1 for note in write if note.doc_id in there)
        index = [note.doc_id for note in write] + (store.docs.pending(only=same) if same else [])
        if index:
            outcome.indexed += store.docs.index_docs(index).indexed
        if progress is not None:
            progress(min(start + BATCH, total), total)
    outcome.entities = len(entity_ids)
    return outcome


def _document(items: ImportSet, note: ImportedNote, text: str) -> NewDocument:
    return NewDocument(
        id=note.doc_id,
        content=text,
        title=note.title,
        filepath=note.filepath,
        doc_type="note",
        metadata={"imported_from": items.format, "source_type": note.kind, "tags": note.tags},
    )
