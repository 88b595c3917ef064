"""The vector index: one interface, three engines.

The database is the source of truth: every chunk's vector is kept (float32 bytes) in
``chunks.embedding``, stamped with its embedder, in the same transaction as the chunk. An engine
answers nearest-neighbour queries over those vectors:

- :class:`ExactScanIndex` — a cosine scan in numpy over the vectors read from the database,
  cached in memory until the index generation changes. Always available.
- ``LanceIndex`` (``lance.py``) — LanceDB under ``.dokoro/db/vectors.lance`` on the embedded backend,
  when the optional ``lancedb`` extra is installed; rebuilt from the database when it drifts.
- ``PgVectorIndex`` (``pgvector.py``) — pgvector on PostgreSQL when the extension was enabled.

``vector_engines.open_vector_index`` picks one; ``search_status`` and ``dokoro doctor`` name it.
A recall on a store of 2,000 memories or more takes its vector leg from neither: the memories' chunk vectors are
held in memory and scanned exactly (``memory_index.py``, which also serves the conflict gate).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import func, select
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.retrieval.tables import chunks, index_state

if TYPE_CHECKING:
    from dokoro_store.retrieval.scope import DocScope

__all__ = ["ChunkVector", "ExactScanIndex", "VectorHit", "VectorIndex", "current_generation"]


@dataclass(frozen=True)
class VectorHit:
    chunk_id: str
    doc_id: str
    score: float  # cosine similarity


@dataclass(frozen=True)
class ChunkVector:
    chunk_id: str
    doc_id: str
    chunk_index: int
    embedder: str
    vector: Any  # 1-d float32 array, unit length


class VectorIndex(Protocol):
    engine: str  # "exact" | "lancedb" | "pgvector"

    def describe(self) -> str: ...

    def write_in_transaction(self, session: Session, rows: Sequence[ChunkVector]) -> None:
        """Called inside the transaction that wrote these chunks."""
        ...

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        """Called once the chunks of ``doc_ids`` (replaced by ``rows``) are committed."""
        ...

    def clear(self) -> None:
        """Forget every vector (the database rows are cleared by the caller)."""
        ...

    def search(self, vector: Any, embedder: str, k: int, scope: DocScope | None = None) -> list[VectorHit]:
        """The ``k`` chunks nearest ``vector`` among those stamped ``embedder`` (and of the documents
        ``scope`` allows: a condition of the search, never a filter of its answer)."""
        ...

    def count(self) -> int:
        """Vectors the engine holds."""
        ...

    def close(self, *, finish: bool = True) -> None:
        """The store is closing: finish what was written behind when ``finish`` (nothing for most
        engines), else leave it marked for the next process."""
        ...

    def optimise(self, rebuild: bool = False) -> str:
        """Build or refresh the engine's nearest-neighbour index now (after a bulk write);
        ``rebuild`` trains it again from scratch (after a re-embed). Says what it did."""
        ...


def current_generation(session: Session) -> int:
    value = session.execute(select(index_state.c.generation).where(index_state.c.id == 1)).scalar()
    return int(value or 0)


def top_k(matrix: Any, vector: Any, k: int) -> list[tuple[int, float]]:
    """Indices and cosine scores of the ``k`` best rows of ``matrix`` (rows and vector unit length)."""
    import numpy as np

    if matrix.shape[0] == 0 or k <= 0:
        return []
    scores = matrix @ np.asarray(vector, dtype=np.float32)
    k = min(k, scores.shape[0])
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(int(i), float(scores[i])) for i in best]


class ExactScanIndex:
    """Exact cosine search over the vectors kept in the database (cached per index generation)."""

    engine = "exact"

    def __init__(self, db: Database, reason: str = "") -> None:
        self._db = db
        self._reason = reason
        self._lock = threading.Lock()
        self._cache: tuple[int, str, Any, list[str], list[str]] | None = None
        self._rows_of: dict[str, list[int]] | None = None  # document → its rows in the cached matrix

    def describe(self) -> str:
        why = f" ({self._reason})" if self._reason else ""
        return f"exact scan of the vectors in the database{why}"

    def write_in_transaction(self, session: Session, rows: Sequence[ChunkVector]) -> None:
        return None

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        return None

    def clear(self) -> None:
        with self._lock:
            self._cache = None

    def _matrix(self, embedder: str, generation: int | None = None) -> tuple[Any, list[str], list[str]]:
        """The vectors of ``embedder`` (``generation``: the index generation the caller just read)."""
        import numpy as np

        with self._lock:
            cached = self._cache
        if cached is not None and (cached[0], cached[1]) == (generation, embedder):
            return cached[2], cached[3], cached[4]
        with self._db.read() as session:
            generation = current_generation(session)
            with self._lock:
                cached = self._cache
            if cached is not None and cached[0] == generation and cached[1] == embedder:
                return cached[2], cached[3], cached[4]
            rows = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding)
                .where(chunks.c.embedder == embedder, chunks.c.embedding.is_not(None))
                .order_by(chunks.c.chunk_id)
            ).all()
        chunk_ids = [str(r[0]) for r in rows]
        doc_ids = [str(r[1]) for r in rows]
        if rows:
            matrix = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<f4").reshape(len(rows), -1)
        else:
            matrix = np.zeros((0, 1), dtype=np.float32)
        with self._lock:
            self._cache = (generation, embedder, matrix, chunk_ids, doc_ids)
            self._rows_of = None
        return matrix, chunk_ids, doc_ids

    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Any]] | None:
        """(chunk id, document id, vector) of ``doc_ids``' chunks from the matrix the last search
        scanned (None when there is none for ``embedder``): the fusion reads the candidates' vectors
        from the same snapshot as the vector leg, without a query."""
        with self._lock:
            cached = self._cache
            if cached is None or cached[1] != embedder:
                return None
            if self._rows_of is None:
                rows_of: dict[str, list[int]] = {}
                for index, doc_id in enumerate(cached[4]):
                    rows_of.setdefault(doc_id, []).append(index)
                self._rows_of = rows_of
            rows_of = self._rows_of
        matrix, chunk_ids = cached[2], cached[3]
        return [(chunk_ids[i], doc_id, matrix[i]) for doc_id in dict.fromkeys(doc_ids) for i in rows_of.get(doc_id, ())]

    def search(
        self, vector: Any, embedder: str, k: int, scope: DocScope | None = None, *, generation: int | None = None
    ) -> list[VectorHit]:
        """See :class:`VectorIndex`; ``generation``: the index generation the caller just read."""
        matrix, chunk_ids, doc_ids = self._matrix(embedder, generation)
        if matrix.shape[0] and matrix.shape[1] != len(vector):
            return []

        def nearest(n: int, allowed: Sequence[str] | None) -> list[VectorHit]:
            if allowed is None:
                return [VectorHit(chunk_ids[i], doc_ids[i], score) for i, score in top_k(matrix, vector, n)]
            wanted = set(allowed)
            rows = [i for i, doc_id in enumerate(doc_ids) if doc_id in wanted]
            return [
                VectorHit(chunk_ids[rows[i]], doc_ids[rows[i]], score) for i, score in top_k(matrix[rows], vector, n)
            ]

        if scope is None:
            return nearest(k, None)
        from dokoro_store.retrieval.scope import scoped_nearest

        return scoped_nearest(self._db, scope, k, nearest, lambda hit: hit.doc_id, matrix.shape[0])

    def count(self) -> int:
        with self._db.read() as session:
            value = session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.embedding.is_not(None))
            ).scalar()
        return int(value or 0)

    def optimise(self, rebuild: bool = False) -> str:
        return "exact scan: no index to build"

    def close(self, *, finish: bool = True) -> None:
        return None
