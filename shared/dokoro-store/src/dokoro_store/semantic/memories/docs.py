"""A memory's document: the row of ``docs`` (``memory:<id>``) that carries it into the store's index.

Full text, vectors and the entity graph come with the document; its status follows the memory's
state. Written in the memory's own transaction by remember (:func:`save_doc`), afterwards and best
effort when a memory changes (:func:`index_one`), or many in one pass for an import or a reindex
(:func:`index_many`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import update
from sqlmodel import Session, col, select

from dokoro_store.db.engine import Database
from dokoro_store.models.docs import Doc
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories.rows import DOC_PREFIX, DOC_TYPE, doc_fields, doc_text

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import DocumentService, Progress

__all__ = ["index_many", "index_one", "save_doc"]


def save_doc(docs: DocumentService, session: Session, memory: MemoryRow) -> None:
    """Write the memory's document in the transaction that writes the memory."""
    docs.save_in(session, f"{DOC_PREFIX}{memory.id}", doc_text(memory), **doc_fields(memory))


def index_one(docs: DocumentService, memory: MemoryRow) -> bool:
    """Save the memory's document and index it (full text, vectors, graph); best effort."""
    docs.save(f"{DOC_PREFIX}{memory.id}", doc_text(memory), **doc_fields(memory))
    report = docs.index_docs([f"{DOC_PREFIX}{memory.id}"])
    return report.indexed + report.unchanged > 0


def index_many(
    db: Database,
    docs: DocumentService,
    rows: Sequence[MemoryRow],
    *,
    threads: Sequence[tuple[str | None, int | None]] | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> int:
    """Save the memories' documents in one go and index them (one pass); the number indexed.

    ``threads``: each row's conversation and place in it (a bulk import); without it, a
    document keeps the thread it has. Each document's status follows its memory's state.
    """
    from dokoro_store.semantic.documents.service import NewDocument

    doc_ids = [f"{DOC_PREFIX}{m.id}" for m in rows]
    if threads is None:
        kept: dict[str, tuple[str | None, int | None]] = {}
        with db.read() as session:
            for start in range(0, len(doc_ids), 500):
                batch = doc_ids[start : start + 500]
                for doc_id, thread, pos in session.exec(
                    select(Doc.id, Doc.thread, Doc.thread_pos).where(col(Doc.id).in_(batch))
                ):
                    kept[doc_id] = (thread, pos)
        threads = [kept.get(doc_id, (None, None)) for doc_id in doc_ids]
    docs.save_many(
        [
            NewDocument(
                thread=thread,
                thread_pos=thread_pos,
                id=doc_id,
                content=f"{m.title}\n\n{m.body}" + (f"\n\nEntities: {', '.join(m.entities)}" if m.entities else ""),
                title=m.title,
                filepath=f"memory://{m.id}",
                doc_type=DOC_TYPE,
                status=m.state,
                metadata={"memory_type": m.type, "trust": m.trust},
            )
            for m, doc_id, (thread, thread_pos) in zip(rows, doc_ids, threads, strict=True)
        ]
    )
    # save_many leaves an existing document's status as it was: a reindex may have changed states.
    by_state: dict[str, list[str]] = {}
    for m, doc_id in zip(rows, doc_ids, strict=True):
        by_state.setdefault(m.state, []).append(doc_id)
    with db.write() as session:
        for state, ids in by_state.items():
            for start in range(0, len(ids), 500):
                session.execute(
                    update(Doc)
                    .where(col(Doc.id).in_(ids[start : start + 500]), col(Doc.status) != state)
                    .values(status=state)
                )
    report = docs.index_docs(doc_ids, force=force, progress=progress)
    return report.indexed
