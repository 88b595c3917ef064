"""``search_status``: what indexes, embedder and re-ranker a store's search uses, and how much
is indexed (the body of ``SearchService.status``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro_store.index.ranking.rerank import RERANKER_LABEL
from dokoro_store.results.search import SearchStatusResult

if TYPE_CHECKING:
    from dokoro_store.db.engine import Database
    from dokoro_store.index.embedders.handle import EmbedderHandle
    from dokoro_store.index.fulltext.index import FullTextIndex
    from dokoro_store.index.vectors.index import VectorIndex
    from dokoro_store.semantic.documents.service import DocumentService

__all__ = ["search_status"]


def search_status(
    db: Database,
    embedder_handle: EmbedderHandle,
    engine: VectorIndex,
    docs: DocumentService,
    full_text_index: FullTextIndex,
) -> SearchStatusResult:
    """What indexes, embedder and re-ranker this store uses, and how much is indexed (loads no model)."""
    # This process's writes still waiting for their vectors are embedded first (the model is
    # loaded already: their write used it), so the counts say what the store holds.
    docs.embed_written()
    embedder = embedder_handle.status()
    stats = docs.stats()
    with db.read() as session:
        full_text = full_text_index.describe(session)
    message = None
    if stats.stamp and embedder.id and stats.stamp != embedder.id and stats.vectors:
        from dokoro_store.semantic.documents.service import mismatch_message

        message = mismatch_message(stats.stamp, embedder.id)
    in_engine = engine.count()
    missing = None
    if stats.vectors > in_engine:
        missing = (
            f"The vector engine ({engine.engine}) holds {in_engine} of the {stats.vectors} stored vectors, so "
            "search by meaning misses the documents of the others (its files were removed, or it fell behind). "
            "Rebuild it with search_reindex full=true (or `dokoro reindex --full`)."
        )
    return SearchStatusResult(
        embedder_choice=embedder.choice,
        embedder_kind=embedder.kind,
        embedder=embedder.id,
        embedder_label=embedder.label,
        embedder_available=embedder.available,
        embedder_detail=embedder.detail,
        embedder_model_file=embedder.model_file,
        reranker=RERANKER_LABEL,
        vector_engine=engine.engine,
        vector_engine_label=engine.describe(),
        full_text=full_text,
        total_docs=stats.total_docs,
        indexed_docs=stats.indexed_docs,
        pending_docs=stats.pending_docs,
        chunks=stats.chunks,
        vectors=stats.vectors,
        engine_vectors=in_engine,
        tokens=stats.tokens,
        index_stamp=stats.stamp,
        stamp_mismatch=message,
        vectors_missing=missing,
    )
