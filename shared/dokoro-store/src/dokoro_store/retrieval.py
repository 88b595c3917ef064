"""The retrieval engine: embedders, vector index, full text, hybrid search and documents.

Layers, bottom up (each module says more):

- :mod:`.config` — :class:`RetrievalConfig`, passed in by the entry point (``DOKORO_EMBEDDER`` …).
- :mod:`.embedders` — the :class:`~.embedders.Embedder` protocol and the lazy handle that picks
  :mod:`.static` (bundled model2vec), :mod:`.ollama` or :mod:`.hashing`.
- :mod:`.vectors` — the vector index interface: exact scan, :mod:`.lance` (LanceDB), :mod:`.pgvector`.
- :mod:`.memory_index` — the memories' chunk vectors in memory (:mod:`.row_matrix`), kept in step
  by the memories' revs: the conflict gate's neighbours and recall's vector leg on a large store.
- :mod:`.fulltext` + :mod:`.planner` — FTS5 / tsvector and the query planner.
- :mod:`.chunking`, :mod:`.documents` — the indexing pipeline (and the ``on_indexed`` listener hook
  for entity extraction), :mod:`.workspace_index` — workspace markdown reconcile and import.
- :mod:`.fusion`, :mod:`.search` — reciprocal rank fusion and the hybrid search service.
- :mod:`.summary_vectors` — embeddings of episodic summaries for recall ranking.

Importing this package loads no numpy, model2vec, lancedb or pyarrow: they load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro_store.index.config import EMBEDDER_CHOICES, EmbedderChoice, RetrievalConfig

if TYPE_CHECKING:
    from dokoro_store.clock import Clock
    from dokoro_store.db.engine import Database
    from dokoro_store.index.vectors.index import VectorIndex
    from dokoro_store.paths import StorePaths

__all__ = ["EMBEDDER_CHOICES", "EmbedderChoice", "Retrieval", "RetrievalConfig"]


class Retrieval:
    """The retrieval services of one store, wired together (the Store exposes them)."""

    def __init__(self, paths: StorePaths, db: Database, clock: Clock, config: RetrievalConfig) -> None:
        import logging

        from dokoro_store.episodic.summary_vectors import SummaryVectors
        from dokoro_store.index.embedders.handle import EmbedderHandle
        from dokoro_store.index.embedders.ollama_client import OllamaServers
        from dokoro_store.semantic.documents.service import DocumentService
        from dokoro_store.semantic.documents.workspace import WorkspaceIndex
        from dokoro_store.semantic.search.service import SearchService

        self._log = logging.getLogger("dokoro.store")
        self._paths = paths
        self._db = db
        self.config = config
        self._vector_index: VectorIndex | None = None
        # The Ollama servers this store talks to (embedder and deep extraction share their health).
        self.ollama = OllamaServers()
        # One handle for every service of the store; ``auto`` consults the stamp of the stored vectors.
        self.embedder = EmbedderHandle(config, stamp_lookup=self._stamp, ollama=self.ollama)
        self.docs = DocumentService(db, clock, self.embedder, self.vectors, embed_behind=config.embed_behind)
        self.summaries = SummaryVectors(db)
        self.markdown = WorkspaceIndex(paths, db, self.docs)
        self.search = SearchService(db, self.embedder, self.docs, self.markdown, self.vectors, clock)

    def _stamp(self) -> str | None:
        return self.docs.stamp()[0]

    def vectors(self) -> VectorIndex:
        """The vector engine of this store, chosen on first use."""
        if self._vector_index is None:
            from dokoro_store.index.vectors.engines import open_vector_index

            self._vector_index = open_vector_index(self._db, self._paths, self.config)
        return self._vector_index

    def close(self, *, finish: bool = True) -> None:
        self.docs.close(finish=finish)  # embeds what waits first (finish), so LanceDB copies it below
        if self._vector_index is not None:
            self._vector_index.close(finish=finish)  # before the database goes: LanceDB copies what waits
        self.embedder.close()
        self.ollama.close()
