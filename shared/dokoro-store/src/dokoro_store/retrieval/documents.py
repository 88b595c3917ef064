"""Documents and their search index: saving, chunking, embedding, and telling listeners.

Pipeline for one document: sha256 of its content → compared with ``doc_vectors.content_hash`` →
when new or changed, chunked (§4.5), each chunk embedded and stamped with the embedder id, the
chunks and vectors written in one transaction (plus the vector engine), then every *indexing
listener* is called. Unchanged documents cost one hash. Full text needs no step here: the
database keeps its full-text indexes in step with ``docs`` by itself.

Indexing listeners (the hook for entity extraction)
---------------------------------------------------
Anything that must run whenever a document is indexed registers a callable on the store::

    def extract(doc: IndexedDocument) -> None:
        ...  # doc.doc_id, doc.title, doc.content, doc.filepath, doc.doc_type, doc.reason

    store.docs.on_indexed(extract)

A listener registered with ``batch=True`` gets the documents of one indexing batch in one call
(``Sequence[IndexedDocument]``): it can read and write for all of them in a few statements.

It is called after the document's chunks are committed, once per document whose content is new
or changed (``reason`` = ``"new"`` / ``"changed"``) or re-indexed by a full reindex (``"full"``) —
whichever path got it there: a tool (``search_index_content``, ``dokoro_workspace_dump``), the
reconcile of hand-edited workspace markdown, ``dokoro migrate`` or ``dokoro reindex``. Re-embedding
alone (``dokoro reembed``) does not call it: the content did not change. A listener that raises is
logged and skipped; it never fails the indexing nor the other listeners. Listeners run in the
indexing process, synchronously: keep them quick or hand the work off.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, overload

from sqlalchemy import delete, func, or_, select, update
from sqlmodel import Session

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderMismatchError, InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc
from dokoro_store.retrieval import pgvector
from dokoro_store.retrieval.doc_records import (
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
from dokoro_store.retrieval.embedders import EmbedderHandle, unit_mean
from dokoro_store.retrieval.indexing import BatchPlan, Indexer, bump_generation
from dokoro_store.retrieval.markdown_docs import content_hash
from dokoro_store.retrieval.tables import chunks, doc_vectors, docs_table, index_state
from dokoro_store.retrieval.threads import clean_thread, place_in_thread
from dokoro_store.retrieval.vectors import VectorIndex
from dokoro_store.secrets import redact
from dokoro_store.write_behind import DelayedStep

if TYPE_CHECKING:
    from dokoro_store.retrieval.embedders import Embedder

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
_DOC_BATCH = 64
_OPTIMISE_AFTER = 1_000  # vectors written by one indexing pass from which the engine's index is refreshed
FULL_SCAN_EVERY = 300.0  # seconds between the full scans of pending_changed
CHANGE_MARGIN = timedelta(minutes=2)  # pending_changed looks this far before its last scan
EMBED_DELAY = 0.05  # seconds from an index_content write to the step that embeds it (and those after it)
RESUME_BATCH = 1_000  # documents left unembedded by another process, embedded by a new one's step


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


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


def _embed_pool() -> ThreadPoolExecutor:
    """The thread that embeds the next indexing batch while the current one is written (made once)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dokoro-index")
        return _pool


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
        # Write-behind of index_content's vectors (module docstring): the documents written and not
        # yet embedded by this process, and the step that embeds them.
        self._embed_behind = embed_behind
        self._behind: set[str] = set()
        self._behind_lock = threading.Lock()
        self._behind_step = DelayedStep(
            self.embed_written,
            name="dokoro-embed-behind",
            failure="dokoro: embedding written documents failed; their vectors wait for the next search or reindex",
        )
        self._listeners: list[OnIndexed] = []
        self._batch_listeners: list[OnIndexedBatch] = []
        self._indexer = Indexer(db, clock, vectors)
        # pending_changed: (monotonic time of the last full scan, clock time of the last scan, the
        # embedder it wanted) and the documents it left pending.
        self._pending_scan: tuple[float, datetime, str | None] | None = None
        self._pending_left: set[str] = set()

    # ------------------------------------------------------------------ listeners
    @overload
    def on_indexed(self, listener: OnIndexed) -> OnIndexed: ...
    @overload
    def on_indexed(self, listener: OnIndexedBatch, *, batch: Literal[True]) -> OnIndexedBatch: ...
    def on_indexed(self, listener: Any, *, batch: bool = False) -> Any:
        """Call ``listener`` for every document indexed from now on (see the module docstring);
        with ``batch``, once per indexing batch with its documents."""
        (self._batch_listeners if batch else self._listeners).append(listener)
        return listener

    def _notify(self, docs: Sequence[IndexedDocument]) -> None:
        if not docs:
            return
        for many in list(self._batch_listeners):
            try:
                many(docs)
            except Exception:  # a listener must never break indexing (or the other listeners)
                log.exception("dokoro: indexing listener %r failed on %d documents", many, len(docs))
        for doc in docs:
            for listener in list(self._listeners):
                try:
                    listener(doc)
                except Exception:  # a listener must never break indexing (or the other listeners)
                    log.exception("dokoro: indexing listener %r failed on %s", listener, doc.doc_id)

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
        doc_id = validate_doc_id(doc_id)
        content = redact(content).text  # secrets never reach the index (or a team's shared database)
        now = self._clock.now()
        row = session.get(Doc, doc_id, with_for_update=True)
        created = row is None
        if row is None:
            row = Doc(
                id=doc_id,
                filepath=filepath or f"{CONTENT_PREFIX}{doc_id}",
                title=title or "Untitled",
                created_at=now,
                updated_at=now,
            )
        elif filepath:
            row.filepath = filepath
        row.content = content
        row.content_hash = content_hash(content)
        row.updated_at = now
        if title:
            row.title = title
        if doc_type:
            row.doc_type = doc_type
        if status:
            row.status = status
        if priority:
            row.priority = priority
        if metadata is not None:
            row.metadata_json = {**(row.metadata_json or {}), **metadata}
        if thread is not None:
            row.thread = thread
            row.thread_pos = thread_pos
        session.add(row)
        return created

    def save_many(self, docs: Sequence[NewDocument]) -> int:
        """Create or update many documents in one transaction (bulk ingest); returns how many.

        Existing documents get the new title and content; their path, type and status stay.
        """
        if not docs:
            return 0
        now = self._clock.now()
        contents = [redact(doc.content).text for doc in docs]
        rows = [
            {
                "id": validate_doc_id(doc.id),
                "filepath": doc.filepath or f"{CONTENT_PREFIX}{doc.id.strip()}",
                "title": doc.title or "Untitled",
                "content": content,
                "content_hash": content_hash(content),
                "doc_type": doc.doc_type,
                "status": doc.status,
                "priority": "medium",
                "metadata_json": doc.metadata,
                "thread": doc.thread,
                "thread_pos": doc.thread_pos,
                "created_at": now,
                "updated_at": now,
            }
            for doc, content in zip(docs, contents, strict=True)
        ]
        upsert = self._db.ops.upsert_each(
            docs_table, ["id"], ["title", "content", "content_hash", "updated_at", "thread", "thread_pos"]
        )
        with self._db.write() as session:
            session.execute(upsert, rows)
        return len(rows)

    def delete(self, doc_id: str) -> bool:
        with self._db.write() as session:
            row = session.get(Doc, doc_id)
            if row is None:
                return False
            session.delete(row)  # chunks and doc_vectors go with it (ON DELETE CASCADE)
            bump_generation(session, self._clock)
        self._vectors().after_commit([doc_id], [])
        return True

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
        behind = self._embed_behind and embedder is not None
        previous = {doc_id: state} if state is not None else {}
        plan = self._indexer.plan_rows([row], previous, False, None if behind else embedder, report)
        vectors = self._indexer.embed_plan(plan)
        now = self._clock.now()
        saved: dict[str, Any] = {
            "id": doc_id,
            "filepath": f"{CONTENT_PREFIX}{doc_id}",  # a new document's; an existing one keeps its own
            "title": title,
            "content": text,
            "content_hash": row.stored_hash,
            "created_at": at or now,
            "updated_at": now,
        }
        # The row as save() writes it (title, text, hash, time; path, type and status kept), in
        # one statement rather than through the ORM; its thread and place when it has one.
        columns = ["title", "content", "content_hash", "updated_at"]
        if thread is not None:
            columns += ["thread", "thread_pos"] + (["created_at"] if at is not None else [])
        upsert = self._db.ops.upsert_each(docs_table, ["id"], columns)
        with self._db.write() as session:
            if thread is not None:
                saved["thread"] = thread
                saved["thread_pos"] = place_in_thread(session, self._db.ops, doc_id, thread, at)
                report.thread_place = (thread, saved["thread_pos"])
            session.connection().execute(upsert, [saved])
            _embedder, indexed, after = self._indexer.write_in(session, plan, vectors, report)
        after()
        self._notify(indexed)
        if behind and plan.todo:
            report.vectors_behind = 1
            with self._behind_lock:
                self._behind.add(doc_id)
            self._behind_step.schedule(EMBED_DELAY)
        if cleaned.kinds:
            report.note(cleaned.notice())
        return report

    def embed_written(self) -> int:
        """Embed the documents this process wrote without vectors (write-behind), in batches; returns
        how many were (re)indexed. A document changed meanwhile is indexed as it now stands."""
        with self._behind_lock:
            ids, self._behind = sorted(self._behind), set()
        if not ids:
            return 0
        try:
            return self.index_docs(ids, current_only=True).indexed
        except BaseException:
            with self._behind_lock:  # still marked in the database; tried again by the next write's step
                self._behind.update(ids)
            raise

    def resume_behind(self) -> None:
        """Schedule the write-behind step for documents indexed without vectors (a process killed
        before embedding what it wrote): one read of the partial index of unembedded documents."""
        if not self._embed_behind or self._embedder.config.embedder == "none":
            return
        with self._db.read() as session:
            ids = [
                str(x)
                for x in session.execute(
                    select(doc_vectors.c.doc_id).where(doc_vectors.c.embedder.is_(None)).limit(RESUME_BATCH)
                ).scalars()
            ]
        if ids:
            with self._behind_lock:
                self._behind.update(ids)
            self._behind_step.schedule(EMBED_DELAY)

    def close(self, *, finish: bool = True) -> None:
        """Stop the write-behind step and (``finish``) embed what waits; unfinished, the documents
        stay marked (index state without an embedder) and the next search or reindex embeds them."""
        self._behind_step.close(wait=finish)
        if finish:
            try:
                self.embed_written()
            except Exception:  # closing: the marks stay in the database
                log.warning("dokoro: embedding written documents at close failed; the next search does", exc_info=True)

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
            self._notify(indexed)

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
        rebuild = self._before_bulk_write(ids, force, embedder)
        try:
            self._index_batches(ids, force, embedder, report, progress, notify, current_only)
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

    def _before_bulk_write(self, ids: Sequence[str], force: bool, embedder: Embedder | None) -> bool:
        """PostgreSQL: let pgvector drop its HNSW index before a bulk write it is cheaper to build
        again after (see :meth:`PgVectorIndex.before_bulk_write`); True when it did."""
        if embedder is None or len(ids) < pgvector.BULK_DROP_MIN:
            return False
        engine = self._vectors()
        if not isinstance(engine, pgvector.PgVectorIndex):
            return False
        incoming = len(ids) if force else len(self.pending(only=ids, want=embedder.id))
        return engine.before_bulk_write(embedder.dimension, incoming)

    def _index_batches(
        self,
        ids: list[str],
        force: bool,
        embedder: Embedder | None,
        report: IndexReport,
        progress: Progress | None,
        notify: bool,
        current_only: bool = False,
    ) -> None:
        # A pipeline: the next batch is embedded (on another thread: the embedder releases the GIL)
        # while this one is written and its listeners run, so both cores stay busy on a bulk write.
        starts = list(range(0, len(ids), _DOC_BATCH))
        pending: tuple[int, BatchPlan, Future[tuple[Any, str | None]]] | None = None
        for start in [*starts, None]:
            upcoming = None
            if start is not None:
                plan = self._indexer.plan(ids[start : start + _DOC_BATCH], force, embedder, report)
                if len(starts) > 1:
                    vectors = _embed_pool().submit(self._indexer.embed_plan, plan)
                else:  # one batch (a single document's write): nothing to overlap, no thread hop
                    vectors = Future()
                    vectors.set_result(self._indexer.embed_plan(plan))
                upcoming = (start, plan, vectors)
            if pending is not None:
                done_start, done_plan, vectors = pending
                embedder, indexed = self._indexer.write(
                    done_plan, vectors.result(), report, mark=notify, current_only=current_only
                )
                if notify:
                    self._notify(indexed)
                if progress is not None:
                    progress(min(done_start + _DOC_BATCH, len(ids)), len(ids), "documents")
            pending = upcoming

    def pending_changed(self) -> list[str]:
        """:meth:`pending` for a refresh on every call, without reading every document each time.

        The first call in a process, and one every :data:`FULL_SCAN_EVERY` seconds, scans every
        document. In between, only the documents saved since the last scan began (less
        :data:`CHANGE_MARGIN`, for clocks and transactions that commit late) are looked at — an
        index range on ``docs.updated_at`` — plus those the last refresh left pending (an indexing
        that failed is tried again on the next call, as before). A change of the embedder wanted
        starts a full scan.
        """
        started = time.monotonic()
        now = self._clock.now()
        want = self._wanted_embedder()
        last = self._pending_scan
        if last is None or last[2] != want or started - last[0] >= FULL_SCAN_EVERY:
            found = self.pending(want=want)
            self._pending_scan = (started, now, want)
        else:
            found = self.pending(since=last[1] - CHANGE_MARGIN, want=want)
            if self._pending_left:
                found = sorted(set(found) | set(self.pending(only=sorted(self._pending_left), want=want)))
            self._pending_scan = (last[0], now, want)
        self._pending_left = set(found)
        return found

    def pending(
        self,
        *,
        since: datetime | None = None,
        only: Sequence[str] | None = None,
        want: str | Literal[False] | None = False,
    ) -> list[str]:
        """Documents whose index is missing or stale (content changed, or vectors missing); ``since``:
        among those saved at or after it; ``only``: among these ids."""
        want = self._wanted_embedder() if want is False else want
        stale = [
            doc_vectors.c.doc_id.is_(None),
            docs_table.c.content_hash.is_(None),
            doc_vectors.c.content_hash != docs_table.c.content_hash,
        ]
        if want is not None:
            stale += [doc_vectors.c.embedder.is_(None), doc_vectors.c.embedder != want]
        statement = (
            select(docs_table.c.id)
            .select_from(docs_table.outerjoin(doc_vectors, doc_vectors.c.doc_id == docs_table.c.id))
            .where(docs_table.c.content.is_not(None), docs_table.c.content != "", or_(*stale))
            .order_by(docs_table.c.id)
        )
        if since is not None:
            statement = statement.where(docs_table.c.updated_at >= since)
        if only is not None:
            found: list[str] = []
            with self._db.read() as session:
                for start in range(0, len(only), 500):
                    batch = statement.where(docs_table.c.id.in_(list(only[start : start + 500])))
                    found += [str(x) for x in session.execute(batch).scalars()]
            return sorted(found)
        with self._db.read() as session:
            return [str(x) for x in session.execute(statement).scalars()]

    def index_pending(self, progress: Progress | None = None) -> IndexReport:
        return self.index_docs(self.pending(), progress=progress)

    def reindex(self, *, full: bool = False, progress: Progress | None = None) -> IndexReport:
        """Index what changed; ``full`` drops every chunk and vector first and rebuilds all (and the
        full-text index), with the embedder this process uses."""
        if not full:
            return self.index_pending(progress)
        self._keeps_the_stamp()
        self.clear_index(rebuild_full_text=True)
        return self.index_docs(None, force=True, progress=progress)

    def _keeps_the_stamp(self) -> None:
        """Before a full reindex: refuse unless this process embeds with the embedder the store's
        vectors are stamped with. Clearing the vectors would otherwise move the whole store to this
        process's embedder, and every other process on it would stop matching; only
        :meth:`reembed` (``dokoro reembed``) changes a store's embedder."""
        stored, _dim = self.stamp()
        if stored is None or self._vector_count() == 0:
            return
        embedder = self._embedder.get()
        if embedder is not None and embedder.id != stored:
            embedder = self._embedder.adopt(stored) or embedder
        if embedder is not None and embedder.id == stored:
            return
        here = f"embeds with {embedder.id}" if embedder is not None else f"cannot run it ({self._embedder.reason})"
        raise EmbedderMismatchError(
            f"a full reindex rebuilds the vectors with the store's embedder {stored}, but this process {here}; "
            "nothing was changed. Run it where that embedder runs (or with DOKORO_EMBEDDER=auto), or move the "
            "whole store to another embedder with `dokoro reembed`"
        )

    def clear_index(self, *, rebuild_full_text: bool = False) -> None:
        """Forget every chunk and vector (and the stamp); documents stay."""
        from dokoro_store.retrieval.fulltext import full_text_for

        with self._db.write() as session:
            session.execute(delete(chunks))
            session.execute(delete(doc_vectors))
            session.execute(update(index_state).where(index_state.c.id == 1).values(embedder=None, dimension=None))
            bump_generation(session, self._clock)
            if rebuild_full_text:
                full_text_for(self._db.dialect).rebuild(session)
        self._vectors().clear()

    def reembed(self, progress: Progress | None = None) -> IndexReport:
        """Re-embed every indexed document with the current embedder and restamp the index."""
        embedder = self._embedder.require()
        self.clear_index()
        report = self.index_docs(None, force=True, progress=progress, notify=False)
        report.embedder = embedder.id
        log.info("dokoro: vector index after the re-embed: %s", self._vectors().optimise(rebuild=True))
        return report

    # ------------------------------------------------------------------ stamp
    def stamp(self) -> tuple[str | None, int | None]:
        """The embedder the stored vectors are stamped with, and their dimension."""
        with self._db.read() as session:
            row = session.execute(select(index_state.c.embedder, index_state.c.dimension)).first()
        return (row[0], row[1]) if row else (None, None)

    def is_indexed(self, doc_id: str) -> bool:
        """Whether the document's current content has been indexed."""
        with self._db.read() as session:
            found = session.execute(
                select(doc_vectors.c.doc_id)
                .join(docs_table, docs_table.c.id == doc_vectors.c.doc_id)
                .where(doc_vectors.c.doc_id == doc_id, doc_vectors.c.content_hash == docs_table.c.content_hash)
            ).first()
        return found is not None

    def check_search_stamp(self, embedder: Embedder, stored: str | Literal[False] | None = False) -> Embedder:
        """The embedder to compare with the stored vectors: ``embedder``, or under ``auto`` the bundled
        embedder the index is stamped with (another process claimed the store first). Refuses to
        compare a query vector with vectors of another embedder. ``stored``: the stamp, when the
        caller read it already."""
        if stored is False:
            stored, _dim = self.stamp()
        if stored is not None and stored != embedder.id and self._vector_count() > 0:
            adopted = self._embedder.adopt(stored)
            if adopted is not None:
                return adopted
            raise EmbedderMismatchError(mismatch_message(stored, embedder.id))
        return embedder

    def _wanted_embedder(self) -> str | None:
        status = self._embedder.status()
        if not status.available or status.id is None:
            return None
        stored, _dim = self.stamp()
        if stored is not None and stored != status.id:
            return None  # a mismatch is reported, not retried on every call
        return status.id

    def _vector_count(self, other_than: str | None = None) -> int:
        statement = select(func.count()).select_from(chunks).where(chunks.c.embedding.is_not(None))
        if other_than is not None:
            statement = statement.where(chunks.c.embedder != other_than)
        with self._db.read() as session:
            return int(session.execute(statement).scalar() or 0)

    def stats(self) -> IndexStats:
        with self._db.read() as session:
            total = session.execute(
                select(func.count())
                .select_from(docs_table)
                .where(docs_table.c.content.is_not(None), docs_table.c.content != "")
            ).scalar()
            indexed = session.execute(
                select(func.count())
                .select_from(docs_table.join(doc_vectors, doc_vectors.c.doc_id == docs_table.c.id))
                .where(doc_vectors.c.content_hash == docs_table.c.content_hash)
            ).scalar()
            # A chunk is stamped with an embedder only when it has a vector: counted on the stamp's
            # index, not by reading every chunk's vector.
            chunk_count, vector_count = session.execute(
                select(func.count(), func.count(chunks.c.embedder)).select_from(chunks)
            ).one()
            tokens = session.execute(select(func.coalesce(func.sum(doc_vectors.c.token_count), 0))).scalar()
            stamp = session.execute(select(index_state.c.embedder, index_state.c.dimension)).first()
        return IndexStats(
            total_docs=int(total or 0),
            indexed_docs=int(indexed or 0),
            pending_docs=len(self.pending()),
            chunks=int(chunk_count or 0),
            vectors=int(vector_count or 0),
            tokens=int(tokens or 0),
            stamp=stamp[0] if stamp else None,
            stamp_dimension=stamp[1] if stamp else None,
        )
