"""Extraction into the entity graph: the regex pass over every indexed document (skipped when
its text is unchanged), and deep extraction with a local chat model merged with it.

Write-behind
------------
The regex pass is not on a write's path: an index write marks every document it (re)indexed
with its write's token (``docs.unextracted``, in the write's own transaction), and a background
step of the writing process (:data:`EXTRACT_DELAY` after the first write it has not extracted
yet) extracts the marked documents in batches of :data:`EXTRACT_BATCH`, then clears the marks of
exactly the writes it extracted, in the transaction that records their extraction hashes (a
document indexed again meanwhile keeps its new mark). The step also runs when the store closes.
A process killed before it leaves its marks in the database: the next one completes them.

Nothing answers from a stale graph: every graph read (:meth:`GraphExtraction.catch_up`, called
by the graph's queries, hence the graph tools and hybrid search's graph signal) first completes
whatever is marked, whichever process wrote it. An indexing batch of :data:`INLINE_FROM`
documents or more (a bulk import, a reindex) and a full reindex are extracted inline, in the
indexing call, as before.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, cast

from sqlalchemy import bindparam, delete, func, select, update
from sqlmodel import Session

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc, DocEntity, EntityContentHash
from dokoro_store.results.graph import DeepEntity, DeepExtraction, DeepRelation
from dokoro_store.semantic.graph.extraction import MENTIONS, Extraction, OllamaChat, extract_regex, merge, regex_only
from dokoro_store.semantic.graph.extraction.ollama import ChatFailedError
from dokoro_store.semantic.graph.storage import GraphStorage, Persisted
from dokoro_store.walls.secrets import redact

if TYPE_CHECKING:
    from dokoro_store.index.embedders.ollama_client import OllamaServers

__all__ = ["GraphExtraction", "IndexedText", "PersistedExtraction", "content_hash"]


log = logging.getLogger(__name__)

_IN_BATCH = 500  # documents per IN list / multi-row upsert
EXTRACT_DELAY = 0.5  # seconds from a write to the background step that extracts it
EXTRACT_BATCH = 200  # marked documents read, extracted and cleared per step
INLINE_FROM = 16  # an indexing batch of this many documents (bulk) is extracted inline


def content_hash(text: str) -> str:
    """sha256 of a document's text: unchanged text is not extracted again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PersistedExtraction:
    """An extraction and what persisting it wrote."""

    extraction: Extraction
    persisted: Persisted

    def result(self) -> DeepExtraction:
        """What ``dokoro_entity_extract_deep`` publishes: entities with their saved ids, and the
        relations between them (not the entity-to-document "mentions") by entity name."""
        extraction, persisted = self.extraction, self.persisted
        names = {e.key: e.name for e in extraction.entities}
        return DeepExtraction(
            doc_id=persisted.doc_id,
            source=cast(Literal["hybrid", "regex-only"], extraction.source),
            model=extraction.model,
            warning=extraction.warning,
            entities=[
                DeepEntity(
                    type=e.type,
                    name=e.name,
                    canonical_name=e.canonical,
                    confidence=e.confidence,
                    context=e.context,
                    id=persisted.entity_ids.get(e.key),
                )
                for e in extraction.entities
            ],
            relations=[
                DeepRelation(
                    source=names.get(r.source, r.source[1]),
                    target=names.get(r.target, r.target[1]),
                    type=r.type,
                    confidence=r.confidence,
                    evidence=r.evidence,
                )
                for r in extraction.relations
                if r.type != MENTIONS
            ],
            links=persisted.links,
            relations_created=persisted.relations_created,
            relations_closed=persisted.relations_closed,
        )


class IndexedText(Protocol):
    """What the graph needs of a document that was just indexed (the indexing listener's argument)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def reason(self) -> str: ...


class GraphExtraction:
    """Extracts entities and relations from documents and persists them through the storage."""

    def __init__(
        self, db: Database, clock: Clock, storage: GraphStorage, *, ollama: OllamaServers | None = None
    ) -> None:
        self._db = db
        self._ollama = ollama
        self._clock = clock
        self._storage = storage
        self._completing = threading.Lock()  # one batch of marks completed at a time in this process
        self._step = db.background.step(
            self.complete_pending,
            name="dokoro-graph-extract",
            failure="dokoro: entity extraction behind writes failed; the next step retries",
        )

    def extract_text(self, doc_id: str, text: str, *, valid_from: datetime | str | None = None) -> PersistedExtraction:
        """Regex-extract ``text`` (redacted first: a secret is never an entity) and persist it for ``doc_id``."""
        extraction = extract_regex(redact(text).text)
        self.complete_pending([doc_id])  # the document's pending extraction first: this one replaces it
        return PersistedExtraction(extraction, self._storage.persist(doc_id, extraction, valid_from=valid_from))

    def persist_texts(self, docs: Sequence[tuple[str, str, Extraction, datetime | None]]) -> list[Persisted]:
        """Write the graph of documents about to be saved with exactly these texts, ``(doc_id, text,
        extraction, valid_from)`` each, in one transaction with their extraction hashes: the regex
        pass of their indexing then skips them (the caller's ``extraction`` holds what it would
        find, merged with the caller's own; a bulk import). The graph commits before the documents
        do, so a document saved is a document whose graph is written."""
        if not docs:
            return []
        now = self._clock.now()
        hashes = table_of(EntityContentHash)
        rows = [
            {"doc_id": doc_id, "content_hash": content_hash(text), "last_extracted": now}
            for doc_id, text, _e, _w in docs
        ]

        def record_hashes(session: Session) -> None:
            session.execute(self._db.ops.upsert_each(hashes, ["doc_id"], ["content_hash", "last_extracted"]), rows)

        return self._storage.persist_many(
            [(doc_id, extraction) for doc_id, _t, extraction, _w in docs],
            valid_froms=[written for *_rest, written in docs],
            also=record_hashes,
        )

    def index_document(self, doc_id: str, text: str | None, *, force: bool = False) -> Persisted | None:
        """Regex extraction for an indexed document, skipped when its text is unchanged since the last
        extraction (unless ``force``) or empty. Returns what was written, or None when skipped."""
        done = self.index_documents([(doc_id, text, force)])
        return done[0] if done else None

    def index_documents(  # noqa: C901 - one batch's transaction: clears, extraction, links and marks together
        self,
        docs: Sequence[tuple[str, str | None, bool]],
        *,
        marks: Sequence[tuple[str, int]] = (),
        written_at: Mapping[str, datetime] | None = None,
        strict: bool = True,
    ) -> list[Persisted]:
        """:meth:`index_document` for several ``(doc_id, text, force)`` at once: their extraction
        hashes are read in one query and written in one statement; each document that names entities
        has its graph written in its own transaction (as :meth:`extract_text`), so a document that
        fails (logged) costs only itself; the old links of the documents that name none are dropped
        with the hashes. ``marks`` (``(doc_id, token)`` of the write-behind) are cleared in the
        transaction that writes the hashes; ``written_at`` (when each text was written) is the
        start of the validity of its relations (default now). With ``strict`` (the default), the failure of a lone
        document is raised; otherwise it is logged as for several. Returns what was written, for
        the documents not skipped."""
        wanted: dict[str, tuple[str, str, bool]] = {}
        for doc_id, text, force in docs:
            if text and text.strip():
                wanted[doc_id] = (text, content_hash(text), force)
        if not wanted:
            if marks:
                with self._db.write() as session:
                    self._clear_marks(session, marks)
            return []
        lone = strict and len(wanted) == 1
        hashes = table_of(EntityContentHash)
        ids = sorted(wanted)
        seen: dict[str, str] = {}
        with self._db.read() as session:
            for start in range(0, len(ids), _IN_BATCH):
                rows = session.execute(
                    select(hashes.c.doc_id, hashes.c.content_hash).where(
                        hashes.c.doc_id.in_(ids[start : start + _IN_BATCH])
                    )
                )
                seen.update((str(doc_id), str(digest)) for doc_id, digest in rows)
        by_doc: dict[str, Persisted] = {}
        # Most texts name no entity (a chat turn, a short note): persisting their empty extraction
        # only drops the document's old links, which one statement does for all of them below
        # instead of a write transaction each.
        unlinked: list[str] = []
        linked: list[tuple[str, Extraction]] = []
        for doc_id in ids:
            text, digest, force = wanted[doc_id]
            if not force and seen.get(doc_id) == digest:
                continue
            try:
                extraction = extract_regex(redact(text).text)
            except Exception:  # as indexing listeners: one document's failure never stops the others
                if lone:  # one document: its failure is the caller's to see
                    raise
                log.exception("dokoro: entity extraction failed on %s", doc_id)
                continue
            if extraction.entities:
                linked.append((doc_id, extraction))
            else:
                unlinked.append(doc_id)
                by_doc[doc_id] = Persisted(doc_id, {}, 0, 0, 0)
        if len(linked) > 1:
            # The documents that name entities in one transaction (a round trip per statement
            # instead of per document: what a bulk import on PostgreSQL waits on) …
            try:
                moments = [(written_at or {}).get(doc_id) for doc_id, _e in linked]
                by_doc.update((done.doc_id, done) for done in self._storage.persist_many(linked, valid_froms=moments))
                linked = []
            except Exception:  # … and one by one when that fails, so a bad document costs only itself
                log.warning("dokoro: entity graph of %d documents failed in one go; one by one", len(linked))
        for doc_id, extraction in linked:
            try:
                by_doc[doc_id] = self._storage.persist(doc_id, extraction, valid_from=(written_at or {}).get(doc_id))
            except Exception:
                if lone:
                    raise
                log.exception("dokoro: entity extraction failed on %s", doc_id)
        persisted = [by_doc[doc_id] for doc_id in ids if doc_id in by_doc]
        now = self._clock.now()
        written = [
            {"doc_id": doc_id, "content_hash": wanted[doc_id][1], "last_extracted": now}
            for doc_id in ids
            if doc_id in by_doc
        ]
        if written or marks:
            links = table_of(DocEntity)
            with self._db.write() as session:
                for start in range(0, len(unlinked), _IN_BATCH):
                    session.execute(delete(links).where(links.c.doc_id.in_(unlinked[start : start + _IN_BATCH])))
                if written:
                    session.execute(
                        self._db.ops.upsert_each(hashes, ["doc_id"], ["content_hash", "last_extracted"]), written
                    )
                self._clear_marks(session, marks)
        return persisted

    # ------------------------------------------------------------------ write-behind
    @staticmethod
    def _clear_marks(session: Session, marks: Sequence[tuple[str, int]]) -> None:
        """Clear the marks of exactly these writes (a document marked again since keeps its mark)."""
        if not marks:
            return
        docs = table_of(Doc)
        # One statement run for every mark (executemany): each write has its own token.
        session.connection().execute(
            update(docs)
            .where(docs.c.id == bindparam("mark_doc"), docs.c.unextracted == bindparam("mark_token"))
            .values(unextracted=None),
            [{"mark_doc": doc_id, "mark_token": token} for doc_id, token in marks],
        )

    def _marked(self, only: Sequence[str] | None, limit: int) -> list[tuple[str, str | None, int, datetime]]:
        """Up to ``limit`` marked documents (among ``only`` when given): id, text, token, when written."""
        docs = table_of(Doc)
        statement = select(docs.c.id, docs.c.content, docs.c.unextracted, docs.c.updated_at).where(
            docs.c.unextracted.is_not(None)
        )
        if only is not None:
            statement = statement.where(docs.c.id.in_(list(only)))
        with self._db.read() as session:
            # In the order of the partial index (ordering by id would scan every document).
            rows = session.execute(statement.order_by(docs.c.unextracted, docs.c.id).limit(limit)).all()
        return [(str(r[0]), r[1], int(r[2]), r[3]) for r in rows]

    def pending(self) -> int:
        """How many documents are marked not yet extracted (by any process)."""
        docs = table_of(Doc)
        with self._db.read() as session:
            count = session.execute(
                select(func.count()).select_from(docs).where(docs.c.unextracted.is_not(None))
            ).scalar_one()
        return int(count or 0)

    def complete_pending(self, only: Sequence[str] | None = None, *, force: bool = False) -> int:
        """Extract the marked documents (every one, or those among ``only``) now, in batches of
        :data:`EXTRACT_BATCH`; returns how many were taken. ``force`` extracts even unchanged text."""
        if only is not None and not only:
            return 0
        done = 0
        groups = [None] if only is None else [list(only[i : i + _IN_BATCH]) for i in range(0, len(only), _IN_BATCH)]
        for subset in groups:
            # On the background step's thread, each batch first gives way to the foreground (a
            # no-op on any other thread); the lock is held per batch, so a reader completing the
            # marks it needs waits for one batch at most, and no batch is extracted twice.
            while self._step.pause():
                with self._completing:
                    rows = self._marked(subset, EXTRACT_BATCH)
                    if not rows:
                        break
                    self.index_documents(
                        [(doc_id, text, force) for doc_id, text, _token, _at in rows],
                        marks=[(doc_id, token) for doc_id, _text, token, _at in rows],
                        # Relations hold from when their text was written, however late the
                        # extraction: a full reindex reads old texts again, and what they say
                        # held when they were written, not from the reindex (graph history).
                        written_at={doc_id: at for doc_id, _text, _token, at in rows},
                        strict=False,
                    )
                    done += len(rows)
        return done

    def catch_up(self) -> None:
        """Before a graph read: complete what any process left marked (one indexed query when none is)."""
        docs = table_of(Doc)
        with self._db.read() as session:
            marked = session.execute(select(docs.c.id).where(docs.c.unextracted.is_not(None)).limit(1)).first()
        if marked is not None:
            self.complete_pending()

    def close(self, *, finish: bool = True) -> None:
        """Stop the background step and (``finish``) extract what is still marked; unfinished, the
        marks stay in the database and the next process or graph read completes them."""
        self._step.close(wait=finish)
        if not finish:
            return
        try:
            self.complete_pending()
        except Exception:  # closing: the marks stay in the database, the next process completes them
            log.warning("dokoro: entity extraction at close failed; the next process completes it", exc_info=True)

    def on_document_indexed(self, doc: IndexedText) -> None:
        """Indexing listener: regex extraction of every (re)indexed document. Unchanged text is skipped,
        except on a full reindex (``reason == "full"``), which extracts everything again."""
        self.index_document(doc.doc_id, doc.content, force=doc.reason == "full")

    def on_documents_indexed(self, docs: Sequence[IndexedText]) -> None:
        """Indexing listener for one batch (the store registers this one): the write marked its
        documents; a full reindex and a bulk batch (:data:`INLINE_FROM` documents or more) are
        extracted now, anything smaller by the background step shortly after (module docstring)."""
        full = [doc.doc_id for doc in docs if doc.reason == "full"]
        rest = [doc.doc_id for doc in docs if doc.reason != "full"]
        if full:
            self.complete_pending(full, force=True)
        if len(rest) >= INLINE_FROM:
            self.complete_pending(rest)
        elif rest:
            self._step.schedule(EXTRACT_DELAY)

    def forget_document(self, doc_id: str) -> int:
        """Drop a deleted document's links and extraction hash (entities and relations stay: history)."""
        self.complete_pending([doc_id])  # its own pending extraction first, as if written inline
        links = table_of(DocEntity)
        hashes = table_of(EntityContentHash)
        with self._db.write() as session:
            removed = session.execute(
                select(func.count()).select_from(links).where(links.c.doc_id == doc_id)
            ).scalar_one()
            session.execute(delete(links).where(links.c.doc_id == doc_id))
            session.execute(delete(hashes).where(hashes.c.doc_id == doc_id))
        return int(removed or 0)

    def document_text(self, doc_id: str) -> str:
        """The stored content of a document, for a deep extraction without ``text``."""
        with self._db.read() as session:
            doc = session.get(Doc, doc_id)
        if doc is None:
            raise NotFoundError(f"No document with id {doc_id!r}; pass the text to extract as `text`")
        if not (doc.content or "").strip():
            raise InvalidArgumentError(f"Document {doc_id!r} has no content; pass the text to extract as `text`")
        return str(doc.content)

    def extract_deep(self, doc_id: str, text: str | None, chat: OllamaChat) -> PersistedExtraction:
        """Regex plus the chat model, merged and persisted in one transaction.

        Ollama unreachable or the model missing raises :class:`OllamaUnavailableError` (nothing is
        written). A model that times out or answers unusable JSON gives a ``regex-only`` result.
        """
        doc_id = doc_id.strip()
        if not doc_id:
            raise InvalidArgumentError("docId must not be empty")
        body = redact(text).text if text is not None and text.strip() else None
        if body is None:
            if text is not None:
                raise InvalidArgumentError("text is empty; pass the text to extract, or omit it to use the document")
            body = self.document_text(doc_id)
        regex = extract_regex(body)
        if self._ollama is not None:
            chat = chat.within(self._ollama)
        chat.check()
        try:
            extraction = merge(regex, chat.extract(body))
        except ChatFailedError as exc:
            extraction = regex_only(regex, model=chat.model, warning=str(exc))
        self.complete_pending([doc_id])  # the document's pending extraction first: this one replaces it
        return PersistedExtraction(extraction, self._storage.persist(doc_id, extraction))
