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

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.services.graph_extraction import GraphExtraction, IndexedText, PersistedExtraction, content_hash
from dokoro_store.services.graph_queries import (
    MAX_DEPTH,
    TRAVERSAL_LIMIT,
    GraphLink,
    GraphQueries,
    GraphSearch,
    Traversal,
)
from dokoro_store.services.graph_storage import (
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
    ) -> None:
        self.storage = GraphStorage(db, clock, functional_relation_types)
        self.queries = GraphQueries(db, clock)
        self.extraction = GraphExtraction(db, clock, self.storage)
        # The parts' methods, offered as the service's own (each documented where it is defined).
        self.upsert_entity = self.storage.upsert_entity
        self.entity = self.storage.entity
        self.find_entity = self.storage.find_entity
        self.upsert_relation = self.storage.upsert_relation
        self.persist = self.storage.persist
        self.history = self.queries.history
        self.traverse = self.queries.traverse
        self.stats = self.queries.stats
        self.search = self.queries.search
        self.linked_documents = self.queries.linked_documents
        self.entities_named_in = self.queries.entities_named_in
        self.search_signal = self.queries.search_signal
        self.extract_text = self.extraction.extract_text
        self.index_document = self.extraction.index_document
        self.index_documents = self.extraction.index_documents
        self.on_document_indexed = self.extraction.on_document_indexed
        self.on_documents_indexed = self.extraction.on_documents_indexed
        self.forget_document = self.extraction.forget_document
        self.document_text = self.extraction.document_text
        self.extract_deep = self.extraction.extract_deep

    @property
    def functional_relation_types(self) -> frozenset[str]:
        """The single-valued relation types: a new target closes the source's open fact."""
        return self.storage.functional_relation_types
