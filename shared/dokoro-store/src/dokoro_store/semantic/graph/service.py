"""Semantic memory: the bi-temporal entity graph (reference §2.6, §4.7, §4.8).

Writes never delete or overwrite a fact: a relation row holds when the fact was true and when
the store learned it (:mod:`.graph_storage`). Reads are time-travel queries (:mod:`.graph_queries`).
Every indexed document is regex-extracted into the graph, and a deep extraction merges a local
chat model's answer with it (:mod:`.graph_extraction`).

:class:`GraphService` (``store.graph``) is the one entry point: it owns the three parts and
offers their methods as its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models import Entity
from dokoro_store.semantic.graph.extraction import Extraction
from dokoro_store.semantic.graph.indexer import (
    GraphExtraction,
    IndexedText,
    PersistedExtraction,
    content_hash,
)
from dokoro_store.semantic.graph.queries import (
    MAX_DEPTH,
    TRAVERSAL_LIMIT,
    GraphLink,
    GraphQueries,
    GraphSearch,
    Traversal,
)

if TYPE_CHECKING:
    from dokoro_store.index.embedders.ollama_client import OllamaServers

from dokoro_store.semantic.graph.storage import (
    DEFAULT_FUNCTIONAL_RELATION_TYPES,
    GraphStorage,
    Persisted,
    RelationWrite,
)

__all__ = [
    "DEFAULT_FUNCTIONAL_RELATION_TYPES",
    "MAX_DEPTH",
    "TRAVERSAL_LIMIT",
    "GraphLink",
    "GraphSearch",
    "GraphService",
    "IndexedText",
    "Persisted",
    "PersistedExtraction",
    "RelationWrite",
    "Traversal",
    "content_hash",
]


class GraphService:
    """Entities, their document links and bi-temporal relations, over one database."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        functional_relation_types: Iterable[str] = DEFAULT_FUNCTIONAL_RELATION_TYPES,
        *,
        ollama: OllamaServers | None = None,
    ) -> None:
        """``ollama``: the store's Ollama servers, whose cached health deep extraction shares."""
        self.storage = GraphStorage(db, clock, functional_relation_types)
        self.extraction = GraphExtraction(db, clock, self.storage, ollama=ollama)
        # Every question first completes the extraction left behind the writes (write-behind).
        self.queries = GraphQueries(db, clock, before_read=self.extraction.catch_up)
        # The parts' methods, offered as the service's own (each documented where it is defined).
        self.upsert_entity = self.storage.upsert_entity
        self.catch_up = self.extraction.catch_up
        self.complete_pending = self.extraction.complete_pending
        self.pending = self.extraction.pending
        self.close = self.extraction.close
        self.upsert_relation = self.storage.upsert_relation
        self.history = self.queries.history
        self.traverse = self.queries.traverse
        self.stats = self.queries.stats
        self.search = self.queries.search
        self.linked_documents = self.queries.linked_documents
        self.entities_named_in = self.queries.entities_named_in
        self.search_signal = self.queries.search_signal
        self.extract_text = self.extraction.extract_text
        self.index_document = self.extraction.index_document
        self.persist_texts = self.extraction.persist_texts
        self.index_documents = self.extraction.index_documents
        self.on_document_indexed = self.extraction.on_document_indexed
        self.on_documents_indexed = self.extraction.on_documents_indexed
        self.forget_document = self.extraction.forget_document
        self.document_text = self.extraction.document_text
        self.extract_deep = self.extraction.extract_deep

    def persist(self, doc_id: str, extraction: Extraction, *, valid_from: datetime | str | None = None) -> Persisted:
        """:meth:`GraphStorage.persist`, after the document's own pending extraction (which it replaces)."""
        self.extraction.complete_pending([doc_id])
        return self.storage.persist(doc_id, extraction, valid_from=valid_from)

    def entity(self, entity_id: int) -> Entity:
        """:meth:`GraphStorage.entity`, once the pending extraction is complete."""
        self.extraction.catch_up()
        return self.storage.entity(entity_id)

    def find_entity(self, entity_type: str, name: str) -> Entity | None:
        """:meth:`GraphStorage.find_entity`, once the pending extraction is complete."""
        self.extraction.catch_up()
        return self.storage.find_entity(entity_type, name)

    @property
    def functional_relation_types(self) -> frozenset[str]:
        """The single-valued relation types: a new target closes the source's open fact."""
        return self.storage.functional_relation_types
