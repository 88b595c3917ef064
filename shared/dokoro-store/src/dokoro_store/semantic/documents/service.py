"""Documents and their search index: saving, chunking, embedding, and telling listeners.

Pipeline for one document: sha256 of its content → compared with ``doc_vectors.content_hash`` →
when new or changed, chunked (§4.5), each chunk embedded and stamped with the embedder id, the
chunks and vectors written in one transaction (plus the vector engine), then every *indexing
listener* (:mod:`.index_listeners`: ``store.docs.on_indexed``) is called. Unchanged documents cost
one hash. Full text needs no step here: the database keeps its full-text indexes in step with
``docs`` by itself.

:class:`DocumentService` is the store's face for all of it; the work lives beside it: the rows
(:mod:`.doc_rows`), an indexing pass over many documents (:mod:`.index_pass`, :mod:`.indexing`),
the stamp, pending documents and counts (:mod:`.index_status`); ``index_content``'s vectors are
written behind by the store's write-behind (:mod:`dokoro_store.background.write_behind`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, overload

from sqlalchemy import delete, select
from sqlmodel import Session

from dokoro_store.background.write_behind import WriteBehind
from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.index.embedders.handle import EmbedderHandle
from dokoro_store.index.vectors.index import VectorIndex
from dokoro_store.models import Doc
from dokoro_store.models.index import docs_table
from dokoro_store.semantic.documents.indexing.batch import (
    Indexer,
    PreparedIndex,
    bump_generation,
    log_drops,
)
from dokoro_store.semantic.documents.indexing.listeners import IndexListeners
from dokoro_store.semantic.documents.indexing.pipeline import before_bulk_write, index_batches
from dokoro_store.semantic.documents.indexing.status import IndexStatus
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.semantic.documents.records import (
    CONTENT_PREFIX,
    DocRow,
    IndexedDocument,
    IndexReport,
    IndexStats,
    NewDocument,
    OnIndexed,
    OnIndexedBatch,
    Progress,
    embedding_text,
    mismatch_message,
    validate_doc_id,
)
from dokoro_store.semantic.documents.rows import bulk_rows, bulk_upsert, content_row, content_upsert, save_row
from dokoro_store.semantic.documents.threads import clean_thread, place_in_thread
from dokoro_store.walls.secrets import redact

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import Embedder

__all__ = [
    "CONTENT_PREFIX",
    "DocumentService",
    "IndexReport",
    "IndexStats",
    "IndexedDocument",
    "NewDocument",
    "OnIndexed",
    "OnIndexedBatch",
    "PreparedIndex",
    "Progress",
    "embedding_text",
    "mismatch_message",
    "validate_doc_id",
]

log = logging.getLogger("dokoro.store")
_RESUME_LIMIT = 1_000  # documents another process left without vectors, embedded by a new one's step
_OPTIMISE_AFTER = 1_000  # vectors written by one indexing pass from which the engine's index is refreshed


class DocumentService:
    """The documents of a store and their chunks, vectors and listeners."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        embedder: EmbedderHandle,
        vectors: Callable[[], VectorIndex],
        *,
        embed_behind: bool = False,
    ) -> None:
        self._db = db
        self._clock = clock
        self._embedder = embedder
        self._vectors = vectors
        self._listeners = IndexListeners()
        self._indexer = Indexer(db, clock, vectors)
        self._status = IndexStatus(db, clock, embedder)
        self._rebuilding = threading.Lock()
        # Write-behind of index_content's vectors: a document written without them (its index state
        # without an embedder) is indexed again as it then stands, by a step of the store's
        # background work; a document changed meanwhile is left to its own writer.
        self._behind: WriteBehind[str] | None = (
            WriteBehind(
                db.background,
                lambda ids: self.index_docs(ids, current_only=True).indexed,
                self._status.unembedded,
                name="dokoro-embed-behind",
                failure="dokoro: embedding written documents failed; their vectors wait for the next search or reindex",
                sweep_limit=_RESUME_LIMIT,
            )
            if embed_behind
            else None
        )

    # ------------------------------------------------------------------ listeners
    @overload
    def on_indexed(self, listener: OnIndexed) -> OnIndexed: ...
    @overload
    def on_indexed(self, listener: OnIndexedBatch, *, batch: Literal[True]) -> OnIndexedBatch: ...
    def on_indexed(self, listener: Any, *, batch: bool = False) -> Any:
        """Call ``listener`` for every document indexed from now on (see :mod:`.index_listeners`);
        with ``batch``, once per indexing batch with its documents."""
        if batch:
            self._listeners.add_batch(listener)
        else:
            self._listeners.add(listener)
        return listener

    # ------------------------------------------------------------------ documents
    def save(
        self,
        doc_id: str,
        content: str,
        *,
        title: str | None = None,
        filepath: str | None = None,
        doc_type: str | None = None,
        status: str | None = None,
        priority: str | None = None,
        metadata: dict[str, Any] | None = None,
        thread: str | None = None,
        thread_pos: int | None = None,
    ) -> bool:
        """Create or update a document row (not yet indexed); True when it was created.

        A new document without ``filepath`` gets ``index://<doc_id>`` (content with no file behind it).
        ``thread``/``thread_pos`` place it in a conversation or log: search lifts the neighbours of a match.
        """
        with self._db.write() as session:
            return self.save_in(
                session,
                doc_id,
                content,
                title=title,
                filepath=filepath,
                doc_type=doc_type,
                status=status,
                priority=priority,
                metadata=metadata,
                thread=thread,
                thread_pos=thread_pos,
            )

    def save_in(
        self,
        session: Session,
        doc_id: str,
        content: str,
        *,
        title: str | None = None,
        filepath: str | None = None,
        doc_type: str | None = None,
        status: str | None = None,
        priority: str | None = None,
        metadata: dict[str, Any] | None = None,
        thread: str | None = None,
        thread_pos: int | None = None,
    ) -> bool:
        """:meth:`save` inside the caller's write transaction (a row and its document, all or nothing)."""
        return save_row(
            session,
            self._clock.now(),
            doc_id,
            content,
            title=title,
            filepath=filepath,
            doc_type=doc_type,
            status=status,
            priority=priority,
            metadata=metadata,
            thread=thread,
            thread_pos=thread_pos,
        )

    def save_many(self, docs: Sequence[NewDocument]) -> int:
        """Create or update many documents in one transaction (bulk ingest); returns how many.

        Existing documents get the new title and content; their path, type and status stay.
        """
        if not docs:
            return 0
        rows = bulk_rows(docs, self._clock.now())
        upsert = bulk_upsert(self._db)
        with self._db.write() as session:
            session.execute(upsert, rows)
        return len(rows)

    def delete(self, doc_id: str) -> bool:
        with self._db.write() as session:
            row = session.get(Doc, doc_id)
            if row is None:
                return False
            session.delete(row)  # chunks and doc_vectors go with it (ON DELETE CASCADE)
            session.flush()  # the document's row locked before the index state's (as every write does)
            log_drops(session, bump_generation(session, self._clock), [doc_id])
        self._vectors().after_commit([doc_id], [])
        return True

    def delete_many(self, doc_ids: Sequence[str]) -> int:
        """Delete these documents (their chunks and vectors with them) in one transaction; returns
        how many existed."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return 0
        with self._db.write() as session:
            gone = [
                str(x)
                for x in session.execute(
                    delete(docs_table).where(docs_table.c.id.in_(ids)).returning(docs_table.c.id)
                ).scalars()
            ]
            if gone:
                log_drops(session, bump_generation(session, self._clock), gone)
        if gone:
            self._vectors().after_commit(gone, [])
        return len(gone)

    def vector_index(self) -> VectorIndex:
        """The vector engine of this store (nearest-neighbour queries of its own, e.g. the conflict gate)."""
        return self._vectors()

    def get(self, doc_id: str) -> Doc:
        with self._db.read() as session:
            row = session.get(Doc, doc_id)
        if row is None:
            raise NotFoundError(f"no document {doc_id!r}; index it with search_index_content first")
        return row

    # ------------------------------------------------------------------ indexing
    def _new_report(self) -> tuple[IndexReport, Embedder | None]:
        """The report of an indexing pass and its embedder (None, noted on the report, when vectors
        are skipped); the caller checks the embedder against the stored stamp."""
        report = IndexReport()
        embedder = self._embedder.get()
        if embedder is None and self._embedder.config.embedder != "none":
            report.note(f"vectors skipped: {self._embedder.reason}")
        return report, embedder

    def index_content(
        self,
        doc_id: str,
        content: str,
        title: str = "Untitled",
        *,
        thread: str | None = None,
        at: datetime | None = None,
    ) -> IndexReport:
        """Save ``content`` under ``doc_id`` (creating the row if needed) and index it now.

        ``thread`` (a conversation or session id) makes the texts written to it neighbours in the
        order written (:mod:`.threads`); ``at`` is when the text was written (default: now), which
        orders it among the thread's entries and becomes the document's creation time.
        """
        if not content.strip():
            raise InvalidArgumentError("content must not be empty: pass the text to index")
        doc_id = validate_doc_id(doc_id)
        thread = clean_thread(thread)
        if at is not None and thread is None:
            raise InvalidArgumentError("at orders a text in its thread: pass thread too (a conversation or session id)")
        title = title.strip() or "Untitled"
        report, embedder = self._new_report()
        stamp, stored, state = self._indexer.previous(doc_id)
        if embedder is not None:
            embedder = self.check_search_stamp(embedder, stamp)  # refuse before writing anything
        report.embedder = embedder.id if embedder is not None else None
        cleaned = redact(content)
        text = redact(cleaned.text).text  # what save_in stores
        # Planned and embedded from the text about to be saved, before the write lock; then the
        # document, its chunks, vectors and index state (and the graph's mark) in one transaction.
        row = DocRow(
            doc_id,
            title,
            text,
            str(stored[0]) if stored is not None else f"{CONTENT_PREFIX}{doc_id}",
            str(stored[1]) if stored is not None else str(Doc.model_fields["doc_type"].default),
            content_hash(text),
        )
        # Write-behind: the row, its chunks and full text now; the vectors a moment later (the write
        # leaves its index state without an embedder, the durable mark any search or reindex completes).
        behind = self._behind is not None and embedder is not None
        previous = {doc_id: state} if state is not None else {}
        plan = self._indexer.plan_rows([row], previous, False, None if behind else embedder, report)
        vectors = self._indexer.embed_plan(plan)
        saved = content_row(doc_id, title, text, row.stored_hash, self._clock.now(), at)
        upsert = content_upsert(self._db, thread=thread is not None, at=at is not None)
        # A plain write (Core, no ORM unit of work); the statement hook redacts what it sends (db/redaction.py).
        with self._db.writing() as connection:
            if thread is not None:
                saved["thread"] = thread
                saved["thread_pos"] = place_in_thread(connection, self._db.ops, doc_id, thread, at)
                report.thread_place = (thread, saved["thread_pos"])
            connection.execute(upsert, [saved])
            _embedder, indexed, after = self._indexer.write_in(connection, plan, vectors, report)
        after()
        self._listeners.notify(indexed)
        if behind and plan.todo and self._behind is not None:
            report.vectors_behind = 1
            self._behind.add(doc_id)
        if cleaned.kinds:
            report.note(cleaned.notice())
        return report

    def embed_written(self) -> int:
        """Embed the documents this process wrote without vectors (write-behind), in batches; returns
        how many were (re)indexed. A document changed meanwhile is indexed as it now stands."""
        return self._behind.run() if self._behind is not None else 0

    def resume_behind(self) -> None:
        """Schedule the write-behind step for documents indexed without vectors (a process killed
        before embedding what it wrote): one read of the partial index of unembedded documents."""
        if self._behind is None or self._embedder.config.embedder == "none":
            return
        self._behind.resume()

    def close(self, *, finish: bool = True) -> None:
        """Stop the write-behind step and (``finish``) embed what waits; unfinished, the documents
        stay marked (index state without an embedder) and the next search or reindex embeds them."""
        if self._behind is not None:
            self._behind.close(finish=finish)

    def prepare_new(self, doc_id: str, content: str, *, title: str, filepath: str, doc_type: str) -> PreparedIndex:
        """Plan and embed a document about to be created, before any write lock (a memory's:
        the memory, its document and its index are then written in one transaction with
        :meth:`write_prepared_in`). Raises :class:`EmbedderMismatchError` before anything is written."""
        report, embedder = self._new_report()
        if embedder is not None:
            embedder = self.check_search_stamp(embedder)
        report.embedder = embedder.id if embedder is not None else None
        text = redact(content).text  # what save_in stores
        digest = content_hash(text)
        row = DocRow(validate_doc_id(doc_id), title, text, filepath, doc_type, digest)
        plan = self._indexer.plan_rows([row], {}, False, embedder, report)
        return PreparedIndex(plan, self._indexer.embed_plan(plan), report, text, digest)

    def write_prepared_in(self, session: Session, prepared: PreparedIndex) -> Callable[[], None]:
        """Write a :meth:`prepare_new` document's chunks, vectors and index state inside the caller's
        write transaction (its document row saved there first); returns the step to call once it is
        committed (the vector engine's own copy, the indexing listeners)."""
        _embedder, indexed, after = self._indexer.write_in(session, prepared.plan, prepared.vectors, prepared.report)

        def committed() -> None:
            after()
            self._listeners.notify(indexed)

        return committed

    def index_docs(
        self,
        doc_ids: Sequence[str] | None = None,
        *,
        force: bool = False,
        progress: Progress | None = None,
        notify: bool = True,
        current_only: bool = False,
    ) -> IndexReport:
        """Index these documents (all when None): only new or changed ones unless ``force``.

        ``notify=False`` skips the indexing listeners (re-embedding: the content did not change).
        ``current_only``: a document whose content changed between reading and writing it is left
        for its own writer's indexing (the write-behind step, racing other writers).

        Raises :class:`EmbedderMismatchError` when the stored vectors were made by another embedder.
        """
        if doc_ids is None:
            with self._db.read() as session:
                doc_ids = [str(x) for x in session.execute(select(docs_table.c.id).order_by(docs_table.c.id)).scalars()]
        ids = list(dict.fromkeys(doc_ids))
        report, embedder = self._new_report()
        if embedder is not None and ids:
            embedder = self.check_search_stamp(embedder)  # refuse before embedding anything
        report.embedder = embedder.id if embedder is not None else None
        rebuild = before_bulk_write(
            self._vectors,
            embedder,
            ids,
            lambda: len(ids) if force or embedder is None else len(self.pending(only=ids, want=embedder.id)),
        )
        try:
            index_batches(
                self._indexer,
                ids,
                force,
                embedder,
                report,
                pool=self._index_pool,
                progress=progress,
                notify=self._listeners.notify if notify else None,
                current_only=current_only,
            )
        finally:
            if rebuild:  # the HNSW index dropped for this write is built again, even after a failure
                log.info("dokoro: vector index after a bulk write: %s", self._vectors().optimise())
        if report.vectors >= _OPTIMISE_AFTER and not rebuild:
            # A bulk write (an import, a reindex, a re-embed): build or refresh the vector engine's
            # ANN index now, once, rather than leave the new rows to an exact scan.
            log.info("dokoro: vector index after indexing %d vectors: %s", report.vectors, self._vectors().optimise())
        if report.indexed >= _OPTIMISE_AFTER:
            self._db.refresh_statistics("docs", "chunks")
        return report

    def _index_pool(self) -> Executor:
        return self._db.background.pool("dokoro-index")

    def pending_changed(self) -> list[str]:
        """:meth:`pending` for a refresh on every call, without reading every document each time
        (see :meth:`IndexStatus.pending_changed`); of the documents this process wrote behind, only
        the last few: the write-behind step embeds the others within seconds (a search right after
        a stream of writes finds them by full text, and does not embed the whole backlog first)."""
        found = self._status.pending_changed()
        later = self._behind.later() if self._behind is not None and found else set()
        return [doc_id for doc_id in found if doc_id not in later] if later else found

    def pending(
        self,
        *,
        since: datetime | None = None,
        only: Sequence[str] | None = None,
        want: str | Literal[False] | None = False,
    ) -> list[str]:
        """Documents whose index is missing or stale (content changed, or vectors missing); ``since``:
        among those saved at or after it; ``only``: among these ids."""
        return self._status.pending(since=since, only=only, want=want)

    def index_pending(self, progress: Progress | None = None) -> IndexReport:
        return self.index_docs(self.pending(), progress=progress)

    def reindex(self, *, full: bool = False, progress: Progress | None = None) -> IndexReport:
        """Index what changed; ``full`` drops every chunk and vector first and rebuilds all (and the
        full-text index), with the embedder this process uses."""
        if not full:
            return self.index_pending(progress)
        # One full rebuild at a time in a process: a second caller (a client repeating the call on
        # the shared server) is refused at once instead of doubling the time and the memory.
        if not self._rebuilding.acquire(blocking=False):
            raise ConflictError("a full reindex is already running in this server; wait for it to finish")
        try:
            self._status.keeps_the_stamp()
            self.clear_index(rebuild_full_text=True)
            return self.index_docs(None, force=True, progress=progress)
        finally:
            self._rebuilding.release()

    def clear_index(self, *, rebuild_full_text: bool = False) -> None:
        """Forget every chunk and vector (and the stamp); documents stay."""
        self._indexer.clear(rebuild_full_text=rebuild_full_text)

    def reembed(self, progress: Progress | None = None) -> IndexReport:
        """Re-embed every indexed document with the current embedder and restamp the index."""
        embedder = self._embedder.require()
        self.clear_index()
        report = self.index_docs(None, force=True, progress=progress, notify=False)
        report.embedder = embedder.id
        log.info("dokoro: vector index after the re-embed: %s", self._vectors().optimise(rebuild=True))
        return report

    # ------------------------------------------------------------------ stamp and counts
    def stamp(self) -> tuple[str | None, int | None]:
        """The embedder the stored vectors are stamped with, and their dimension."""
        return self._status.stamp()

    def is_indexed(self, doc_id: str) -> bool:
        """Whether the document's current content has been indexed."""
        return self._status.is_indexed(doc_id)

    def check_search_stamp(self, embedder: Embedder, stored: str | Literal[False] | None = False) -> Embedder:
        """The embedder to compare with the stored vectors (see :meth:`IndexStatus.check_search_stamp`);
        refuses to compare a query vector with vectors of another embedder."""
        return self._status.check_search_stamp(embedder, stored)

    def stats(self) -> IndexStats:
        return self._status.stats()
