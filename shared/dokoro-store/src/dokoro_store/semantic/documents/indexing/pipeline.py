"""One indexing pass over many documents: batches planned, embedded and written as a pipeline.

The next batch is embedded on another thread (the embedder releases the GIL) while the current one
is written and its listeners run, so both cores stay busy on a bulk write. That thread is the
store's pool ``dokoro-index`` (``store.background``), made on the first pass of more than one batch.
:meth:`~dokoro_store.semantic.documents.service.DocumentService.index_docs` drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING, Any

from dokoro_store.index.vectors import pgvector
from dokoro_store.index.vectors.index import VectorIndex
from dokoro_store.semantic.documents.indexing.batch import BatchPlan, Indexer
from dokoro_store.semantic.documents.records import IndexedDocument, IndexReport, Progress

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import Embedder

__all__ = ["DOC_BATCH", "before_bulk_write", "index_batches"]

DOC_BATCH = 64  # documents per indexing batch


def before_bulk_write(
    vectors: Callable[[], VectorIndex], embedder: Embedder | None, ids: Sequence[str], incoming: Callable[[], int]
) -> bool:
    """PostgreSQL: let pgvector drop its HNSW index before a bulk write it is cheaper to build
    again after (see :meth:`PgVectorIndex.before_bulk_write`); True when it did. ``incoming``:
    how many of ``ids`` will be written (asked only when it matters)."""
    if embedder is None or len(ids) < pgvector.BULK_DROP_MIN:
        return False
    engine = vectors()
    if not isinstance(engine, pgvector.PgVectorIndex):
        return False
    return engine.before_bulk_write(embedder.dimension, incoming())


def index_batches(
    indexer: Indexer,
    ids: list[str],
    force: bool,
    embedder: Embedder | None,
    report: IndexReport,
    *,
    pool: Callable[[], Executor],
    progress: Progress | None,
    notify: Callable[[Sequence[IndexedDocument]], None] | None,
    current_only: bool = False,
) -> None:
    """Index ``ids`` in batches of :data:`DOC_BATCH` (only new or changed ones unless ``force``);
    ``pool``: the thread that embeds the next batch (asked for only when there is more than one);
    ``notify``: the indexing listeners, called with each batch written (None: not called, and the
    documents are not marked for them)."""
    starts = list(range(0, len(ids), DOC_BATCH))
    pending: tuple[int, BatchPlan, Future[tuple[Any, str | None]]] | None = None
    for start in [*starts, None]:
        upcoming = None
        if start is not None:
            plan = indexer.plan(ids[start : start + DOC_BATCH], force, embedder, report)
            if len(starts) > 1:
                vectors = pool().submit(indexer.embed_plan, plan)
            else:  # one batch (a single document's write): nothing to overlap, no thread hop
                vectors = Future()
                vectors.set_result(indexer.embed_plan(plan))
            upcoming = (start, plan, vectors)
        if pending is not None:
            done_start, done_plan, vectors = pending
            embedder, indexed = indexer.write(
                done_plan, vectors.result(), report, mark=notify is not None, current_only=current_only
            )
            if notify is not None:
                notify(indexed)
            if progress is not None:
                progress(min(done_start + DOC_BATCH, len(ids)), len(ids), "documents")
        pending = upcoming
