"""The indexing work for a batch of documents: chunk, embed, stamp, write, in one transaction.

:class:`~dokoro_store.semantic.documents.service.DocumentService` drives it; this module holds the steps
(and the index stamp's claim), so each stays readable on its own.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update
from sqlmodel import Session

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderMismatchError, EmbedderUnavailableError
from dokoro_store.index.chunking import Chunk, chunk_text
from dokoro_store.index.embedders.handle import to_bytes, unit_mean
from dokoro_store.index.vectors.index import ChunkVector, VectorIndex
from dokoro_store.index.vectors.pgvector import PgVectorIndex
from dokoro_store.models.index import chunks, doc_vectors, docs_table, index_drops, index_state
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.semantic.documents.records import (
    DocRow,
    IndexedDocument,
    IndexReport,
    embedding_text,
    mismatch_message,
)

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import Embedder

__all__ = ["BatchPlan", "Indexer", "PreparedIndex", "bump_generation", "log_drops", "new_write_token", "restart_drops"]

_EMBED_BATCH = 256
# The drops log keeps the last _DROPS_KEPT generations, pruned every _PRUNE_EVERY generations (a
# cache that last looked before what is kept reads every vector again).
_DROPS_KEPT = 100_000
_PRUNE_EVERY = 1_024
_STATE_UPDATE = ["content_hash", "token_count", "chunk_count", "embedder", "last_indexed"]


@dataclass
class BatchPlan:
    """One indexing batch read and chunked, waiting for its vectors (see :meth:`Indexer.plan`)."""

    embedder: Embedder | None
    previous: dict[str, Any]
    todo: list[tuple[DocRow, str, str, list[Chunk]]]
    fix_hash: list[tuple[str, str]]


def new_write_token() -> int:
    """A token marking the vectors of one index write not yet copied by a write-behind engine."""
    return secrets.randbits(62) + 1


_BUMP = (
    update(index_state)
    .where(index_state.c.id == 1)
    .values(
        generation=index_state.c.generation + 1,
        updated_at=bindparam("bumped_at", type_=index_state.c.updated_at.type),
    )
    .returning(index_state.c.generation)
)
_STAMP = select(index_state.c.embedder).where(index_state.c.id == 1).with_for_update()
# The one-document write's statements, built once (``index_content`` runs them on every call).
_PREVIOUS = (
    select(
        index_state.c.embedder,
        docs_table.c.id,
        docs_table.c.filepath,
        docs_table.c.doc_type,
        doc_vectors.c.doc_id.label("state_id"),
        doc_vectors.c.content_hash,
        doc_vectors.c.embedder.label("state_embedder"),
    )
    .select_from(
        index_state.outerjoin(docs_table, docs_table.c.id == bindparam("previous_doc")).outerjoin(
            doc_vectors, doc_vectors.c.doc_id == bindparam("previous_doc")
        )
    )
    .where(index_state.c.id == 1)
)
_DELETE_CHUNKS_OF_ONE = delete(chunks).where(chunks.c.doc_id == bindparam("touched_doc"))
_MARK_ONE = update(docs_table).where(docs_table.c.id == bindparam("marked_doc")).values(unextracted=bindparam("mark"))
_INSERT_CHUNKS = insert(chunks)


def bump_generation(session: Session | Connection, clock: Clock) -> int:
    """Tell caches of the vectors that the index changed; the new generation, which the write
    stamps its chunks (``chunks.rev``) and drops with. Called before the write's chunk statements:
    on PostgreSQL the bump locks the index state row until commit, so generations commit in order."""
    return int(session.execute(_BUMP, {"bumped_at": clock.now()}).scalar() or 0)


def log_drops(session: Session | Connection, generation: int, doc_ids: Sequence[str]) -> None:
    """Log that the write of ``generation`` dropped the chunks of ``doc_ids`` without new ones."""
    if doc_ids:
        session.execute(insert(index_drops), [{"rev": generation, "doc_id": d} for d in dict.fromkeys(doc_ids)])
    if generation % _PRUNE_EVERY == 0 and generation > _DROPS_KEPT:
        floor = generation - _DROPS_KEPT
        session.execute(delete(index_drops).where(index_drops.c.rev <= floor))
        session.execute(
            update(index_state).where(index_state.c.id == 1, index_state.c.drops_from < floor).values(drops_from=floor)
        )


def restart_drops(session: Session | Connection, generation: int) -> None:
    """Every chunk was dropped by the write of ``generation`` (a clear of the index): the log
    starts again from it."""
    session.execute(delete(index_drops))
    session.execute(update(index_state).where(index_state.c.id == 1).values(drops_from=generation))


def claim_stamp(session: Session | Connection, embedder: Embedder) -> None:
    """Stamp the index with ``embedder``, unless vectors of another embedder are stored (refused)."""
    row = session.execute(_STAMP).first()
    stored = row[0] if row else None
    if stored == embedder.id:
        return
    if stored is not None:
        others = session.execute(
            select(func.count())
            .select_from(chunks)
            .where(chunks.c.embedding.is_not(None), chunks.c.embedder != embedder.id)
        ).scalar()
        if others:
            raise EmbedderMismatchError(mismatch_message(stored, embedder.id))
    session.execute(
        update(index_state).where(index_state.c.id == 1).values(embedder=embedder.id, dimension=embedder.dimension)
    )


@dataclass(frozen=True)
class _State:
    """A document's index state as :meth:`Indexer.plan_rows` reads it (``doc_vectors``'s row)."""

    content_hash: str
    embedder: str | None


def _nothing() -> None:
    return None


def _current(session: Session, plan: BatchPlan, embedded: tuple[Any, str | None]) -> tuple[BatchPlan, Any]:
    """The plan less the documents whose stored content changed since it was planned (and their vectors)."""
    ids = [doc.id for doc, _d, _r, _p in plan.todo]
    if not ids:
        return plan, embedded
    stored = dict(
        session.connection()
        .execute(select(docs_table.c.id, docs_table.c.content_hash).where(docs_table.c.id.in_(ids)))
        .all()
    )
    keep = [stored.get(doc.id) == digest for doc, digest, _r, _p in plan.todo]
    if all(keep):
        return plan, embedded
    vectors, failed = embedded
    if vectors is not None:
        rows: list[int] = []
        position = 0
        for kept, (_doc, _d, _r, pieces) in zip(keep, plan.todo, strict=True):
            if kept:
                rows.extend(range(position, position + len(pieces)))
            position += len(pieces)
        vectors = vectors[rows]
    todo = [item for kept, item in zip(keep, plan.todo, strict=True) if kept]
    # No stored hash is fixed from a read that is no longer current (index_content always stores one).
    return BatchPlan(plan.embedder, plan.previous, todo, []), (vectors, failed)


class Indexer:
    """Indexes batches of documents into chunks and vectors."""

    def __init__(self, db: Database, clock: Clock, vectors: Callable[[], VectorIndex]) -> None:
        self._db = db
        self._clock = clock
        self._vectors = vectors

    def clear(self, *, rebuild_full_text: bool = False) -> None:
        """Forget every chunk and vector (and the stamp); documents stay."""
        from dokoro_store.index.fulltext.index import full_text_for

        with self._db.write() as session:
            session.execute(delete(chunks))
            session.execute(delete(doc_vectors))
            session.execute(update(index_state).where(index_state.c.id == 1).values(embedder=None, dimension=None))
            restart_drops(session, bump_generation(session, self._clock))
            if rebuild_full_text:
                full_text_for(self._db.dialect).rebuild(session)
        self._vectors().clear()

    def load(self, ids: Sequence[str]) -> tuple[list[DocRow], dict[str, Any]]:
        with self._db.read() as session:
            rows = session.execute(
                select(
                    docs_table.c.id,
                    docs_table.c.title,
                    docs_table.c.content,
                    docs_table.c.filepath,
                    docs_table.c.doc_type,
                    docs_table.c.content_hash,
                ).where(docs_table.c.id.in_(ids))
            ).all()
            previous = {
                str(r.doc_id): r
                for r in session.execute(select(doc_vectors).where(doc_vectors.c.doc_id.in_(ids))).all()
            }
        docs = [DocRow(str(r[0]), str(r[1]), r[2] or "", str(r[3]), str(r[4]), r[5]) for r in rows]
        return docs, previous

    def embed(self, embedder: Embedder, texts: list[str]) -> Any:
        import numpy as np

        parts = [embedder.embed(texts[i : i + _EMBED_BATCH]) for i in range(0, len(texts), _EMBED_BATCH)]
        return np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), dtype=np.float32)

    def plan(self, ids: Sequence[str], force: bool, embedder: Embedder | None, report: IndexReport) -> BatchPlan:
        """What indexing this batch means: the documents to (re)chunk, and their chunks. A batch is
        planned, embedded (:meth:`embed_plan`, on another thread when batches overlap) and written
        (:meth:`write`)."""
        docs, previous = self.load(ids)
        return self.plan_rows(docs, previous, force, embedder, report)

    def previous(self, doc_id: str) -> tuple[str | None, Any, Any]:
        """The index's embedder stamp, the stored document's row (path and type) and its index
        state (either None when missing), in one read (one statement: a write's first step)."""
        # A plain connection (no ORM session: nothing to load) and a statement built once.
        with self._db.engine.connect() as connection:
            found = connection.execute(_PREVIOUS, {"previous_doc": doc_id}).first()
        if found is None:  # no index state row (a store the migrations did not seed): nothing stored
            return None, None, None
        row = (found.filepath, found.doc_type) if found.id is not None else None
        state = _State(found.content_hash, found.state_embedder) if found.state_id is not None else None
        return found.embedder, row, state

    def plan_rows(
        self,
        docs: Sequence[DocRow],
        previous: dict[str, Any],
        force: bool,
        embedder: Embedder | None,
        report: IndexReport,
    ) -> BatchPlan:
        """:meth:`plan` for documents already read (or about to be written: ``index_content``)."""
        report.considered += len(docs)
        todo: list[tuple[DocRow, str, str, list[Chunk]]] = []
        fix_hash: list[tuple[str, str]] = []
        for doc in docs:
            digest = content_hash(doc.content)
            if doc.stored_hash != digest:
                fix_hash.append((doc.id, digest))
            before = previous.get(doc.id)
            vectors_missing = embedder is not None and (before is None or before.embedder != embedder.id)
            if not force and before is not None and before.content_hash == digest and not vectors_missing:
                report.unchanged += 1
                continue
            if force and (before is None or before.content_hash == digest):
                reason = "full"
            elif before is None:
                reason = "new"
            elif before.content_hash != digest:
                reason = "changed"
            else:
                reason = "vectors"
            todo.append((doc, digest, reason, chunk_text(doc.content, doc.title)))
        return BatchPlan(embedder, previous, todo, fix_hash)

    def embed_plan(self, plan: BatchPlan) -> tuple[Any, str | None]:
        """The vectors of the plan's chunks (None without an embedder), and why the embedder could
        not run (None when it did). Touches no database: it may run on another thread."""
        if plan.embedder is None or not plan.todo:
            return None, None
        texts = [embedding_text(doc.title, chunk) for doc, _d, _r, pieces in plan.todo for chunk in pieces]
        try:
            return self.embed(plan.embedder, texts), None
        except EmbedderUnavailableError as exc:
            return None, str(exc)

    def write(
        self,
        plan: BatchPlan,
        embedded: tuple[Any, str | None],
        report: IndexReport,
        *,
        mark: bool = True,
        current_only: bool = False,
    ) -> tuple[Embedder | None, list[IndexedDocument]]:
        """Write a planned batch with its vectors; returns the embedder for the next batch (None once
        it failed) and the documents whose content was (re)indexed, for the listeners.

        With ``mark``, those documents are marked not yet extracted into the entity graph
        (``docs.unextracted``, in the same transaction): the graph's write-behind extracts them.
        With ``current_only``, a document whose stored content is no longer the planned one (written
        again since it was read) is skipped: its newer write indexes it."""
        if not plan.todo and not plan.fix_hash:  # nothing to write: no transaction
            return self._write(None, plan, embedded, report, mark)[:2]
        with self._db.write() as session:
            if current_only:
                plan, embedded = _current(session, plan, embedded)
            embedder, indexed, after = self._write(session, plan, embedded, report, mark)
        after()
        return embedder, indexed

    def write_in(
        self,
        session: Session | Connection,
        plan: BatchPlan,
        embedded: tuple[Any, str | None],
        report: IndexReport,
        *,
        mark: bool = True,
    ) -> tuple[Embedder | None, list[IndexedDocument], Callable[[], None]]:
        """:meth:`write` inside the caller's write transaction (a document saved and indexed all or
        nothing: an ORM session's, or a plain write's connection); the caller calls the returned step
        once the transaction is committed (the vector engine's own copy)."""
        return self._write(session, plan, embedded, report, mark)

    def _write(  # noqa: C901 - one write transaction's statements, in the order the transaction runs them
        self,
        session: Session | Connection | None,
        plan: BatchPlan,
        embedded: tuple[Any, str | None],
        report: IndexReport,
        mark: bool,
    ) -> tuple[Embedder | None, list[IndexedDocument], Callable[[], None]]:
        embedder, previous, todo, fix_hash = plan.embedder, plan.previous, plan.todo, plan.fix_hash
        vectors, failed = embedded
        if failed is not None:
            report.note(f"vectors skipped: {failed}")
            embedder = None  # the rest of this run indexes full text only
        now = self._clock.now()
        engine = self._vectors()
        # On the embedded backend LanceDB copies the vectors later, whichever engine this process
        # uses: each is marked with this write's token until copied (see index/vectors/lance/engine.py).
        token = new_write_token() if self._db.dialect == "sqlite" else None
        generation = 0  # the write's generation, known once the transaction bumps it (below)
        chunk_rows: list[dict[str, Any]] = []
        chunk_vectors: list[ChunkVector] = []
        state_rows: list[dict[str, Any]] = []
        position = 0
        for doc, digest, _reason, pieces in todo:
            for chunk in pieces:
                vector = vectors[position] if vectors is not None else None
                position += 1
                chunk_id = f"{doc.id}_{chunk.index}"
                chunk_rows.append(
                    {
                        "chunk_id": chunk_id,
                        "doc_id": doc.id,
                        "chunk_index": chunk.index,
                        "start_line": chunk.start_line,
                        "end_line": chunk.end_line,
                        "start_char": chunk.start_char,
                        "end_char": chunk.end_char,
                        "header_context": chunk.header_context,
                        "token_count": chunk.token_count,
                        "embedder": embedder.id if vector is not None and embedder is not None else None,
                        "embedding": to_bytes(vector) if vector is not None else None,
                        "unmirrored": token if vector is not None and embedder is not None else None,
                        "rev": generation,
                    }
                )
                if vector is not None and embedder is not None:
                    chunk_vectors.append(ChunkVector(chunk_id, doc.id, chunk.index, embedder.id, vector))
            state_rows.append(
                {
                    "doc_id": doc.id,
                    "content_hash": digest,
                    "token_count": sum(c.token_count for c in pieces),
                    "chunk_count": len(pieces),
                    "embedder": embedder.id if vectors is not None and embedder is not None else None,
                    "last_indexed": now,
                }
            )
        if session is None or (not todo and not fix_hash):
            return embedder, [], _nothing
        touched = [doc.id for doc, _d, _r, _p in todo]
        marked = [doc.id for doc, _d, reason, _p in todo if reason != "vectors"] if mark else []
        # Core statements on the transaction's connection: the ORM session's execute costs more per
        # statement and this write loads no objects.
        connection = session if isinstance(session, Connection) else session.connection()
        if chunk_vectors and embedder is not None:
            claim_stamp(connection, embedder)
        for doc_id, digest in fix_hash:
            connection.execute(update(docs_table).where(docs_table.c.id == doc_id).values(content_hash=digest))
        if touched:
            mark_token = token if token is not None else new_write_token()
            if len(marked) == 1:
                connection.execute(_MARK_ONE, {"marked_doc": marked[0], "mark": mark_token})
            elif marked:
                connection.execute(update(docs_table).where(docs_table.c.id.in_(marked)).values(unextracted=mark_token))
            # The documents' rows are locked before the index state's (the order of a document
            # saved and indexed in one transaction), and the bump before the chunks it stamps.
            generation = bump_generation(connection, self._clock)
            for row in chunk_rows:
                row["rev"] = generation
            log_drops(connection, generation, [doc.id for doc, _d, _r, pieces in todo if not pieces])
            if len(touched) == 1:
                connection.execute(_DELETE_CHUNKS_OF_ONE, {"touched_doc": touched[0]})
            else:
                connection.execute(delete(chunks).where(chunks.c.doc_id.in_(touched)))
            if isinstance(engine, PgVectorIndex):
                # PostgreSQL: the chunks and their vectors in one COPY (no INSERT then UPDATE).
                engine.insert_chunks(connection, chunk_rows, chunk_vectors)
            else:
                if chunk_rows:
                    connection.execute(_INSERT_CHUNKS, chunk_rows)
                engine.write_in_transaction(connection, chunk_vectors)
            connection.execute(self._db.ops.upsert_each(doc_vectors, ["doc_id"], _STATE_UPDATE), state_rows)
        report.indexed += len(todo)
        report.chunks += len(chunk_rows)
        report.tokens += sum(int(r["token_count"]) for r in state_rows)
        report.vectors += len(chunk_vectors)
        indexed = [
            IndexedDocument(doc.id, doc.title, doc.content, doc.filepath, doc.doc_type, digest, reason)
            for doc, digest, reason, _p in todo
            if reason != "vectors"
        ]
        # New documents have no vectors in the engine yet: only the others need deleting there.
        reindexed = [d for d in touched if d in previous]

        def after() -> None:
            if touched:
                engine.after_commit(reindexed, chunk_vectors)

        return embedder, indexed, after


@dataclass
class PreparedIndex:
    """A new document planned and embedded before its write transaction (:meth:`DocumentService.prepare_new`)."""

    plan: BatchPlan
    vectors: tuple[Any, str | None]
    report: IndexReport
    text: str  # the content as stored (redacted)
    digest: str  # its content hash

    def mean_vector(self) -> tuple[str | None, Any]:
        """The embedder and the unit mean of the document's chunk vectors (None, None without vectors)."""
        vectors, failed = self.vectors
        embedder = self.plan.embedder
        if vectors is None or failed is not None or embedder is None or len(vectors) == 0:
            return None, None
        return embedder.id, unit_mean(vectors)
