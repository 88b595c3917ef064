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
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlmodel import Session

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderMismatchError, EmbedderUnavailableError, InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc
from dokoro_store.retrieval.chunking import Chunk, chunk_text
from dokoro_store.retrieval.embedders import EmbedderHandle, to_bytes
from dokoro_store.retrieval.markdown_docs import content_hash
from dokoro_store.retrieval.tables import chunks, doc_vectors, docs_table, index_state
from dokoro_store.retrieval.vectors import ChunkVector, VectorIndex
from dokoro_store.secrets import redact

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
    "Progress",
    "mismatch_message",
]

log = logging.getLogger("dokoro.store")

CONTENT_PREFIX = "index://"  # filepath of a document indexed from content, with no file behind it
_DOC_BATCH = 64
_EMBED_BATCH = 256
_MAX_DOC_ID = 256

Progress = Callable[[int, int, str], None]  # (done, total, what)


def mismatch_message(stored: str, current: str) -> str:
    return (
        f"the vector index was built with {stored}, but this process embeds with {current}: vectors of two "
        f"embedders cannot be compared. Run `dokoro reembed` to rebuild the vectors with {current} "
        "(or set DOKORO_EMBEDDER back so it matches the index); search_universal with mode='keyword' still works."
    )


@dataclass(frozen=True)
class IndexedDocument:
    """A document that was just (re)indexed, as indexing listeners receive it."""

    doc_id: str
    title: str
    content: str
    filepath: str
    doc_type: str
    content_hash: str
    reason: str  # "new" | "changed" | "full"


OnIndexed = Callable[[IndexedDocument], None]


@dataclass(frozen=True)
class NewDocument:
    """A document to save in bulk (:meth:`DocumentService.save_many`)."""

    id: str
    content: str
    title: str = "Untitled"
    filepath: str | None = None
    doc_type: str = "note"
    status: str = "active"
    metadata: dict[str, Any] | None = None
    thread: str | None = None  # the conversation or log it is one entry of (search lifts neighbours)
    thread_pos: int | None = None  # its place in that thread


@dataclass
class IndexReport:
    considered: int = 0
    indexed: int = 0
    unchanged: int = 0
    chunks: int = 0
    tokens: int = 0
    vectors: int = 0
    embedder: str | None = None
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass(frozen=True)
class IndexStats:
    total_docs: int
    indexed_docs: int
    pending_docs: int
    chunks: int
    vectors: int
    tokens: int
    stamp: str | None
    stamp_dimension: int | None


@dataclass(frozen=True)
class _DocRow:
    id: str
    title: str
    content: str
    filepath: str
    doc_type: str
    stored_hash: str | None


class DocumentService:
    """The documents of a store and their chunks, vectors and listeners."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        embedder: EmbedderHandle,
        vectors: Callable[[], VectorIndex],
    ) -> None:
        self._db = db
        self._clock = clock
        self._embedder = embedder
        self._vectors = vectors
        self._listeners: list[OnIndexed] = []

    # ------------------------------------------------------------------ listeners
    def on_indexed(self, listener: OnIndexed) -> OnIndexed:
        """Call ``listener`` for every document indexed from now on (see the module docstring)."""
        self._listeners.append(listener)
        return listener

    def _notify(self, docs: Iterable[IndexedDocument]) -> None:
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
        doc_id = validate_doc_id(doc_id)
        content = redact(content).text  # secrets never reach the index (or a team's shared database)
        now = self._clock.now()
        with self._db.write() as session:
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
        rows = [
            {
                "id": validate_doc_id(doc.id),
                "filepath": doc.filepath or f"{CONTENT_PREFIX}{doc.id.strip()}",
                "title": doc.title or "Untitled",
                "content": redact(doc.content).text,
                "content_hash": content_hash(redact(doc.content).text),
                "doc_type": doc.doc_type,
                "status": doc.status,
                "priority": "medium",
                "metadata_json": doc.metadata,
                "thread": doc.thread,
                "thread_pos": doc.thread_pos,
                "created_at": now,
                "updated_at": now,
            }
            for doc in docs
        ]
        with self._db.write() as session:
            for start in range(0, len(rows), 500):
                session.execute(
                    self._db.ops.upsert_many(
                        docs_table,
                        rows[start : start + 500],
                        ["id"],
                        ["title", "content", "content_hash", "updated_at", "thread", "thread_pos"],
                    )
                )
        return len(rows)

    def delete(self, doc_id: str) -> bool:
        with self._db.write() as session:
            row = session.get(Doc, doc_id)
            if row is None:
                return False
            session.delete(row)  # chunks and doc_vectors go with it (ON DELETE CASCADE)
            self._bump(session)
        self._vectors().after_commit([doc_id], [])
        return True

    def get(self, doc_id: str) -> Doc:
        with self._db.read() as session:
            row = session.get(Doc, doc_id)
        if row is None:
            raise NotFoundError(f"no document {doc_id!r}; index it with search_index_content first")
        return row

    # ------------------------------------------------------------------ indexing
    def index_content(self, doc_id: str, content: str, title: str = "Untitled") -> IndexReport:
        """Save ``content`` under ``doc_id`` (creating the row if needed) and index it now."""
        if not content.strip():
            raise InvalidArgumentError("content must not be empty: pass the text to index")
        embedder = self._embedder.get()
        if embedder is not None:
            self.check_search_stamp(embedder)  # refuse before writing anything
        cleaned = redact(content)
        self.save(doc_id, cleaned.text, title=title.strip() or "Untitled")
        report = self.index_docs([validate_doc_id(doc_id)])
        if cleaned.kinds:
            report.note(cleaned.notice())
        return report

    def index_docs(
        self,
        doc_ids: Sequence[str] | None = None,
        *,
        force: bool = False,
        progress: Progress | None = None,
        notify: bool = True,
    ) -> IndexReport:
        """Index these documents (all when None): only new or changed ones unless ``force``.

        ``notify=False`` skips the indexing listeners (re-embedding: the content did not change).

        Raises :class:`EmbedderMismatchError` when the stored vectors were made by another embedder.
        """
        if doc_ids is None:
            with self._db.read() as session:
                doc_ids = [str(x) for x in session.execute(select(docs_table.c.id).order_by(docs_table.c.id)).scalars()]
        ids = list(dict.fromkeys(doc_ids))
        report = IndexReport()
        embedder = self._embedder.get()
        if embedder is None and self._embedder.config.embedder != "none":
            report.note(f"vectors skipped: {self._embedder.reason}")
        if embedder is not None and ids:
            embedder = self.check_search_stamp(embedder)  # refuse before embedding anything
        report.embedder = embedder.id if embedder is not None else None
        for start in range(0, len(ids), _DOC_BATCH):
            batch = ids[start : start + _DOC_BATCH]
            embedder = self._index_batch(batch, force, embedder, report, notify)
            if progress is not None:
                progress(min(start + _DOC_BATCH, len(ids)), len(ids), "documents")
        return report

    def pending(self) -> list[str]:
        """Documents whose index is missing or stale (content changed, or vectors missing)."""
        want = self._wanted_embedder()
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
        with self._db.read() as session:
            return [str(x) for x in session.execute(statement).scalars()]

    def index_pending(self, progress: Progress | None = None) -> IndexReport:
        return self.index_docs(self.pending(), progress=progress)

    def reindex(self, *, full: bool = False, progress: Progress | None = None) -> IndexReport:
        """Index what changed; ``full`` drops every chunk and vector first and rebuilds all (and the
        full-text index), with the embedder this process uses."""
        if not full:
            return self.index_pending(progress)
        self.clear_index(rebuild_full_text=True)
        return self.index_docs(None, force=True, progress=progress)

    def clear_index(self, *, rebuild_full_text: bool = False) -> None:
        """Forget every chunk and vector (and the stamp); documents stay."""
        from dokoro_store.retrieval.fulltext import full_text_for

        with self._db.write() as session:
            session.execute(delete(chunks))
            session.execute(delete(doc_vectors))
            session.execute(update(index_state).where(index_state.c.id == 1).values(embedder=None, dimension=None))
            self._bump(session)
            if rebuild_full_text:
                full_text_for(self._db.dialect).rebuild(session)
        self._vectors().clear()

    def reembed(self, progress: Progress | None = None) -> IndexReport:
        """Re-embed every indexed document with the current embedder and restamp the index."""
        embedder = self._embedder.require()
        self.clear_index()
        report = self.index_docs(None, force=True, progress=progress, notify=False)
        report.embedder = embedder.id
        return report

    # ------------------------------------------------------------------ stamp
    def stamp(self) -> tuple[str | None, int | None]:
        """The embedder the stored vectors are stamped with, and their dimension."""
        with self._db.read() as session:
            row = session.execute(select(index_state.c.embedder, index_state.c.dimension)).first()
        return (row[0], row[1]) if row else (None, None)

    def check_search_stamp(self, embedder: Embedder) -> Embedder:
        """The embedder to compare with the stored vectors: ``embedder``, or under ``auto`` the bundled
        embedder the index is stamped with (another process claimed the store first). Refuses to
        compare a query vector with vectors of another embedder."""
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

    def _claim_stamp(self, session: Session, embedder: Embedder) -> None:
        row = session.execute(select(index_state.c.embedder).where(index_state.c.id == 1).with_for_update()).first()
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

    def _bump(self, session: Session) -> None:
        session.execute(
            update(index_state)
            .where(index_state.c.id == 1)
            .values(generation=index_state.c.generation + 1, updated_at=self._clock.now())
        )

    # ------------------------------------------------------------------ the work
    def _load(self, ids: Sequence[str]) -> tuple[list[_DocRow], dict[str, Any]]:
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
        docs = [_DocRow(str(r[0]), str(r[1]), r[2] or "", str(r[3]), str(r[4]), r[5]) for r in rows]
        return docs, previous

    def _embed(self, embedder: Embedder, texts: list[str]) -> Any:
        import numpy as np

        parts = [embedder.embed(texts[i : i + _EMBED_BATCH]) for i in range(0, len(texts), _EMBED_BATCH)]
        return np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), dtype=np.float32)

    def _index_batch(
        self, ids: Sequence[str], force: bool, embedder: Embedder | None, report: IndexReport, notify: bool
    ) -> Embedder | None:
        docs, previous = self._load(ids)
        report.considered += len(docs)
        todo: list[tuple[_DocRow, str, str, list[Chunk]]] = []
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

        vectors = None
        if embedder is not None and todo:
            texts = [embedding_text(doc.title, chunk) for doc, _d, _r, pieces in todo for chunk in pieces]
            try:
                vectors = self._embed(embedder, texts)
            except EmbedderUnavailableError as exc:
                report.note(f"vectors skipped: {exc}")
                embedder = None  # the rest of this run indexes full text only
        now = self._clock.now()
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
        if not todo and not fix_hash:
            return embedder
        engine = self._vectors()
        touched = [doc.id for doc, _d, _r, _p in todo]
        with self._db.write() as session:
            if chunk_vectors and embedder is not None:
                self._claim_stamp(session, embedder)
            for doc_id, digest in fix_hash:
                session.execute(update(docs_table).where(docs_table.c.id == doc_id).values(content_hash=digest))
            if touched:
                session.execute(delete(chunks).where(chunks.c.doc_id.in_(touched)))
                if chunk_rows:
                    session.execute(insert(chunks), chunk_rows)
                session.execute(self._db.ops.upsert_many(doc_vectors, state_rows, ["doc_id"], _STATE_UPDATE))
                engine.write_in_transaction(session, chunk_vectors)
                self._bump(session)
        if touched:
            engine.after_commit(touched, chunk_vectors)
        report.indexed += len(todo)
        report.chunks += len(chunk_rows)
        report.tokens += sum(int(r["token_count"]) for r in state_rows)
        report.vectors += len(chunk_vectors)
        if notify:
            self._notify(
                IndexedDocument(doc.id, doc.title, doc.content, doc.filepath, doc.doc_type, digest, reason)
                for doc, digest, reason, _p in todo
                if reason != "vectors"
            )
        return embedder

    # ------------------------------------------------------------------ numbers
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
            chunk_count, vector_count = session.execute(
                select(func.count(), func.count(chunks.c.embedding)).select_from(chunks)
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


_STATE_UPDATE = ["content_hash", "token_count", "chunk_count", "embedder", "last_indexed"]


def validate_doc_id(doc_id: str) -> str:
    value = doc_id.strip()
    if not value:
        raise InvalidArgumentError("doc_id must not be empty: pass a stable id such as 'adr-012-auth'")
    if len(value) > _MAX_DOC_ID:
        raise InvalidArgumentError(f"doc_id is too long ({len(value)} characters; at most {_MAX_DOC_ID})")
    if any(ch in value for ch in "\n\r\t\x00"):
        raise InvalidArgumentError("doc_id must be one line without control characters")
    return value


def embedding_text(title: str, chunk: Chunk) -> str:
    """What gets embedded for a chunk: its heading (or the document title) as context, then the text."""
    context = (chunk.header_context or title or "").strip()
    first_line = chunk.text.lstrip().split("\n", 1)[0].lstrip("#").strip().lower()
    if context and not re.match(re.escape(context.lower()) + r"(\W|$)", first_line):
        return f"{context}\n{chunk.text}"
    return chunk.text
