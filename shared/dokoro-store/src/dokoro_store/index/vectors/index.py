"""The vector index: one interface, three engines.

The database is the source of truth: every chunk's vector is kept (float32 bytes) in
``chunks.embedding``, stamped with its embedder, in the same transaction as the chunk. An engine
answers nearest-neighbour queries over those vectors:

- :class:`ExactScanIndex` — a cosine scan in numpy over the vectors read from the database, held
  in memory and caught up with the writes since it last looked (below). Always available.
- ``LanceIndex`` (``lance.py``) — LanceDB under ``.dokoro/db/vectors.lance`` on the embedded backend,
  when the optional ``lancedb`` extra is installed; rebuilt from the database when it drifts.
- ``PgVectorIndex`` (``pgvector.py``) — pgvector on PostgreSQL when the extension was enabled.

``vector_engines.open_vector_index`` picks one; ``search_status`` and ``dokoro doctor`` name it.
A recall on a store of 2,000 memories or more takes its vector leg from neither: the memories' chunk vectors are
held in memory and scanned exactly (``memory_index.py``, which also serves the conflict gate).

**How the exact scan keeps in step.** Its vectors are the rows of a :class:`~.row_matrix.RowMatrix`
(the memory index's storage), read once, then caught up by change numbers (migration 0030): every
index write bumps ``index_state.generation`` *first* in its transaction and stamps the chunks it
writes with it (``chunks.rev``); a document whose chunks it drops without writing new ones
(deleted, or indexed again into no chunk) goes into ``index_drops`` at that generation. The bump
locks the one ``index_state`` row until commit on PostgreSQL (SQLite has one writer), so
generations commit in order: having seen generation ``g``, a reader has seen every write up to it.
A search reads the generation (one row; nothing more when it has not moved), then the chunks with
``rev`` above the last generation applied (through ``ix_chunks_rev``) and the drops above it:
O(changed rows), whatever the size of the store. A write replaces *all* of a document's chunks
under one ``rev``, so each document named there loses its rows and gets those just read (its
current chunks). Another process's writes are seen the same way. It reads everything again only
when it cannot tell: the first search, another embedder asked, or a clear of the index (a reindex
or re-embed, any process) or the log's pruning past its mark (``index_state.drops_from``).
Two statements that see a write after ``g`` apply it early; the next catch-up (from ``g``) applies
it again, so the rows converge whatever interleaves.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Connection, func, select
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.index.arithmetic import products
from dokoro_store.index.scope import ScopeShares
from dokoro_store.index.vectors.row_matrix import RowMatrix
from dokoro_store.models.index import chunks, index_drops, index_state

if TYPE_CHECKING:
    from dokoro_store.index.scope import DocScope

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

    def write_in_transaction(self, connection: Connection, rows: Sequence[ChunkVector]) -> None:
        """Called inside the transaction that wrote these chunks (on its connection)."""
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


def _state(session: Session) -> tuple[int, int]:
    """The index generation and the generation above which the drops log is complete."""
    row = session.execute(
        select(index_state.c.generation, index_state.c.drops_from).where(index_state.c.id == 1)
    ).first()
    return (int(row[0] or 0), int(row[1] or 0)) if row is not None else (0, 0)


class ExactScanIndex:
    """Exact cosine search over the vectors kept in the database, held in memory and caught up
    by change numbers (module doc); thread-safe."""

    engine = "exact"

    def __init__(self, db: Database, reason: str = "") -> None:
        self._db = db
        self._reason = reason
        self._lock = threading.Lock()
        self._embedder: str | None = None  # the embedder whose vectors are held (None: nothing read yet)
        self._mark = 0  # the index generation last applied
        self._held: RowMatrix | None = None  # None while no vector of the right width was read
        self._chunk_ids: list[str] = []  # chunk id of each row
        self._doc_ids: list[str] = []  # document id of each row
        self._rows: dict[str, list[int]] = {}  # document id → its rows
        self.reads = 0  # full reads of every vector (statistics, and what the tests count)
        self.rows_read = 0  # chunk rows read from the database, full reads and catch-ups
        self._shares = ScopeShares()  # how long the first list of a scoped search is (index/scope.py)

    def describe(self) -> str:
        why = f" ({self._reason})" if self._reason else ""
        return f"exact scan of the vectors in the database{why}"

    def write_in_transaction(self, connection: Connection, rows: Sequence[ChunkVector]) -> None:
        return None

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        return None

    def clear(self) -> None:
        with self._lock:
            self._forget(None)

    # ------------------------------------------------------------------ keeping in step
    def _forget(self, embedder: str | None) -> None:
        self._embedder, self._held = embedder, None
        self._chunk_ids, self._doc_ids, self._rows = [], [], {}

    def _catch_up(self, embedder: str, generation: int | None) -> None:
        """Bring the rows in step with the database (module doc); the caller holds the lock.
        ``generation``: the index generation the caller just read (no query when it is the mark)."""
        if embedder == self._embedder and generation is not None and generation == self._mark:
            return
        with self._db.read() as session:
            now, floor = _state(session)
            if embedder != self._embedder or floor > self._mark:
                self._read_all(session, embedder, now)
                return
            if now == self._mark:
                return
            # No ORDER BY: SQLite would walk the documents' index (every chunk) to avoid a sort.
            changed = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedder, chunks.c.embedding).where(
                    chunks.c.rev > self._mark
                )
            ).all()
            dropped = session.execute(select(index_drops.c.doc_id).where(index_drops.c.rev > self._mark)).scalars()
            touched = {str(d) for d in dropped} | {str(r[1]) for r in changed}
            # Read after the drops: a pruning between the two reads is seen here (module doc).
            if _state(session)[1] > self._mark:
                self._read_all(session, embedder, now)
                return
        self.rows_read += len(changed)
        for doc_id in sorted(touched):
            self._remove(doc_id)
        placed = sorted((str(r[0]), str(r[1]), r[3]) for r in changed if r[2] == embedder and r[3] is not None)
        self._place(placed)
        self._mark = now

    def _read_all(self, session: Session, embedder: str, generation: int) -> None:
        """Read every vector of ``embedder`` (streamed: a batch of bytes at a time)."""
        self._forget(embedder)
        self._mark = generation
        self.reads += 1
        found = session.execute(
            select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding)
            .where(chunks.c.embedder == embedder, chunks.c.embedding.is_not(None))
            .execution_options(yield_per=4096)
        )
        for batch in found.partitions():
            self.rows_read += len(batch)
            self._place(batch)

    def _place(self, rows: Sequence[Any]) -> None:
        """Append the chunk ``rows`` (chunk id, document id, vector bytes); the matrix is as wide
        as the first vector read (a row of another width is left out: no query could match it)."""
        import numpy as np

        if not rows:
            return
        if self._held is None:
            self._held = RowMatrix(len(rows[0][2]) // 4, max(1024, len(rows)), {})
        held = self._held
        rows = [r for r in rows if len(r[2]) == 4 * held.dim]
        if not rows:
            return
        vectors = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<f4").reshape(-1, held.dim)
        start = held.append(vectors)
        for at, row in enumerate(rows, start):
            chunk_id, doc_id = str(row[0]), str(row[1])
            self._chunk_ids.append(chunk_id)
            self._doc_ids.append(doc_id)
            self._rows.setdefault(doc_id, []).append(at)

    def _remove(self, doc_id: str) -> None:
        """Drop a document's rows (the last rows take their places)."""
        held = self._held
        for row in sorted(self._rows.pop(doc_id, ()), reverse=True):
            assert held is not None
            moved_from = held.remove(row)
            chunk_id, owner = self._chunk_ids.pop(), self._doc_ids.pop()
            if moved_from is None:
                continue
            self._chunk_ids[row], self._doc_ids[row] = chunk_id, owner
            moved = self._rows[owner]
            moved[moved.index(moved_from)] = row

    # ------------------------------------------------------------------ reading
    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Any]] | None:
        """(chunk id, document id, vector) of ``doc_ids``' chunks as the last search saw them (None
        when there is none for ``embedder``): the fusion reads the candidates' vectors from the
        same rows as the vector leg, without a query."""
        with self._lock:
            if self._embedder != embedder:
                return None
            held = self._held
            if held is None:
                return []
            return [
                (self._chunk_ids[r], doc_id, held.matrix[r].copy())
                for doc_id in dict.fromkeys(doc_ids)
                for r in self._rows.get(doc_id, ())
            ]

    def search(
        self, vector: Any, embedder: str, k: int, scope: DocScope | None = None, *, generation: int | None = None
    ) -> list[VectorHit]:
        """See :class:`VectorIndex`; ``generation``: the index generation the caller just read."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        with self._lock:
            self._catch_up(embedder, generation)

        def nearest(n: int, allowed: Sequence[str] | None) -> list[VectorHit]:
            with self._lock:
                held = self._held
                if held is None or len(held) == 0 or held.dim != query.shape[0] or n <= 0:
                    return []
                if allowed is None:
                    rows = None
                    scores = products(held.vectors(), query)
                else:
                    rows = [r for doc_id in dict.fromkeys(allowed) for r in self._rows.get(doc_id, ())]
                    scores = products(held.matrix[rows], query)
                best = _best(scores, n, self._chunk_ids if rows is None else [self._chunk_ids[r] for r in rows])
                return [
                    VectorHit(self._chunk_ids[row], self._doc_ids[row], float(scores[i]))
                    for i in best
                    for row in [i if rows is None else rows[i]]
                ]

        if scope is None:
            return nearest(k, None)
        from dokoro_store.index.scope import scoped_nearest

        return scoped_nearest(
            self._db, scope, k, nearest, lambda hit: hit.doc_id, lambda: len(self._chunk_ids), self._shares
        )

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


def _best(scores: Any, k: int, chunk_ids: Sequence[str]) -> list[int]:
    """The indices of the ``k`` best ``scores``, best first, equal scores by chunk id (so the
    answer does not depend on where the rows sit in the matrix)."""
    import numpy as np

    count = min(k, int(scores.shape[0]))
    if count <= 0:
        return []
    kth = scores[np.argpartition(-scores, count - 1)[count - 1]]
    candidates = np.flatnonzero(scores >= kth)
    ranked = sorted((int(i) for i in candidates), key=lambda i: (-float(scores[i]), chunk_ids[i]))
    return ranked[:count]
