"""Extraction into the entity graph: the regex pass over every indexed document (skipped when
its text is unchanged), and deep extraction with a local chat model merged with it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, cast

from sqlalchemy import delete, func, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc, DocEntity, EntityContentHash
from dokoro_store.results.graph import DeepEntity, DeepExtraction, DeepRelation
from dokoro_store.secrets import redact
from dokoro_store.services.extraction import MENTIONS, Extraction, OllamaChat, extract_regex, merge, regex_only
from dokoro_store.services.extraction.ollama import ChatFailedError
from dokoro_store.services.graph_storage import GraphStorage, Persisted

__all__ = ["GraphExtraction", "IndexedText", "PersistedExtraction", "content_hash"]


log = logging.getLogger(__name__)

_IN_BATCH = 500  # documents per IN list / multi-row upsert


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

    def __init__(self, db: Database, clock: Clock, storage: GraphStorage) -> None:
        self._db = db
        self._clock = clock
        self._storage = storage

    def extract_text(self, doc_id: str, text: str, *, valid_from: datetime | str | None = None) -> PersistedExtraction:
        """Regex-extract ``text`` (redacted first: a secret is never an entity) and persist it for ``doc_id``."""
        extraction = extract_regex(redact(text).text)
        return PersistedExtraction(extraction, self._storage.persist(doc_id, extraction, valid_from=valid_from))

    def index_document(self, doc_id: str, text: str | None, *, force: bool = False) -> Persisted | None:
        """Regex extraction for an indexed document, skipped when its text is unchanged since the last
        extraction (unless ``force``) or empty. Returns what was written, or None when skipped."""
        done = self.index_documents([(doc_id, text, force)])
        return done[0] if done else None

    def index_documents(self, docs: Sequence[tuple[str, str | None, bool]]) -> list[Persisted]:
        """:meth:`index_document` for several ``(doc_id, text, force)`` at once: their extraction
        hashes are read in one query and written in one statement; each document that names entities
        has its graph written in its own transaction (as :meth:`extract_text`), so a document that
        fails (logged) costs only itself; the old links of the documents that name none are dropped
        with the hashes. Returns what was written, for the documents not skipped."""
        wanted: dict[str, tuple[str, str, bool]] = {}
        for doc_id, text, force in docs:
            if text and text.strip():
                wanted[doc_id] = (text, content_hash(text), force)
        if not wanted:
            return []
        hashes = EntityContentHash.__table__  # type: ignore[attr-defined]
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
                if len(ids) == 1:  # one document: its failure is the caller's to see
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
                by_doc.update((done.doc_id, done) for done in self._storage.persist_many(linked))
                linked = []
            except Exception:  # … and one by one when that fails, so a bad document costs only itself
                log.warning("dokoro: entity graph of %d documents failed in one go; one by one", len(linked))
        for doc_id, extraction in linked:
            try:
                by_doc[doc_id] = self._storage.persist(doc_id, extraction)
            except Exception:
                if len(ids) == 1:
                    raise
                log.exception("dokoro: entity extraction failed on %s", doc_id)
        persisted = [by_doc[doc_id] for doc_id in ids if doc_id in by_doc]
        now = self._clock.now()
        written = [
            {"doc_id": doc_id, "content_hash": wanted[doc_id][1], "last_extracted": now}
            for doc_id in ids
            if doc_id in by_doc
        ]
        if written:
            links = DocEntity.__table__  # type: ignore[attr-defined]
            with self._db.write() as session:
                for start in range(0, len(unlinked), _IN_BATCH):
                    session.execute(delete(links).where(links.c.doc_id.in_(unlinked[start : start + _IN_BATCH])))
                session.execute(
                    self._db.ops.upsert_each(hashes, ["doc_id"], ["content_hash", "last_extracted"]), written
                )
        return persisted

    def on_document_indexed(self, doc: IndexedText) -> None:
        """Indexing listener: regex extraction of every (re)indexed document. Unchanged text is skipped,
        except on a full reindex (``reason == "full"``), which extracts everything again."""
        self.index_document(doc.doc_id, doc.content, force=doc.reason == "full")

    def on_documents_indexed(self, docs: Sequence[IndexedText]) -> None:
        """:meth:`on_document_indexed` for one indexing batch (the store registers this one)."""
        self.index_documents([(doc.doc_id, doc.content, doc.reason == "full") for doc in docs])

    def forget_document(self, doc_id: str) -> int:
        """Drop a deleted document's links and extraction hash (entities and relations stay: history)."""
        links = DocEntity.__table__  # type: ignore[attr-defined]
        hashes = EntityContentHash.__table__  # type: ignore[attr-defined]
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
        chat.check()
        try:
            extraction = merge(regex, chat.extract(body))
        except ChatFailedError as exc:
            extraction = regex_only(regex, model=chat.model, warning=str(exc))
        return PersistedExtraction(extraction, self._storage.persist(doc_id, extraction))
