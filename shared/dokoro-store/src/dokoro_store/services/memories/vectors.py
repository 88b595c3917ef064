"""The active memories' vectors held in one matrix per process: the conflict gate's nearest
neighbours by an exact scan restricted to active memories, and their cosines without a query.

Each active memory is one row: the mean of its chunks' stored vectors (stamped with one embedder),
made unit length, the vector the gate compares. The matrix is built once per process (one read of
the memories' chunks) and kept in step by the memories' change numbers (``rev``, migration 0019:
every insert and every change of a memory's state or text gives its row a new, higher number,
committed in order): each call reads the rows above the last number seen, through the index on
``rev`` (O(changed rows)), drops them from the matrix and adds back the active ones with their
vectors. A memory whose vectors are not written yet (another process committed it and indexes it
next), or are still an older text's (a text changed in place, not yet re-indexed: its document's
``doc_vectors.content_hash`` is not the hash of the text its row gives), waits in a pending list
looked up again on the following calls.

Why a matrix and not the vector engine: the engine holds every document (workspace files, indexed
content, summaries), so a memory-only neighbour list is either a widened query or a prefilter
(LanceDB ~14 ms of CPU per query at 10k, most of the gate), while a scan of the memories alone is a
matrix-vector product (0.3 ms at 10k, a few ms at 100k) that also hands the gate every candidate's
cosine. The price is memory: 4 × dim bytes per active memory (100k × 384 → 154 MB of RSS per agent
process), held only once a store has more active memories than the gate compares one by one.

Recall's vector leg keeps its own matrix (``chunks.py``): one row per *chunk* of every
memory, whatever its state, since recall returns chunk hits and filters by state. The gate's mean
cosine could be read from it (the sum of a memory's chunk cosines over the norm of the sum of its
chunk vectors) but not bit for bit — the gate's thresholds are calibrated on these numbers — so the
two are kept apart: at 100k memories of one chunk, twice ~100 MB.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.retrieval.embedders import products
from dokoro_store.retrieval.tables import chunks, doc_vectors, stamped_with
from dokoro_store.services.memories.rows import DOC_END, DOC_PREFIX, doc_hash

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ActiveVectors"]

_PENDING_PER_CALL = 64  # memories still waiting for vectors looked up again per call at most
_BATCH = 500  # ids per IN (...) statement
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]


class ActiveVectors:
    """The unit mean vectors of the active memories (module doc); thread-safe."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._embedder: str | None = None
        self._mark = 0  # the highest memory rev applied
        self._matrix: Any = None  # float32 (capacity, dim); rows [0, len(_ids)) are in use
        self._ids: list[str] = []  # memory id of each row in use
        self._row: dict[str, int] = {}  # memory id → its row
        self._pending: dict[str, None] = {}  # active memories whose vectors are not written yet

    def __len__(self) -> int:
        return len(self._ids)

    # ------------------------------------------------------------------ queries
    def nearest(self, query: npt.NDArray[np.float32], embedder: str, k: int, exclude: str) -> dict[str, float]:
        """The ``k`` active memories nearest ``query`` (not ``exclude``) and their cosines, after
        bringing the matrix in step with the database."""
        import numpy as np

        with self._lock:
            self._refresh(embedder, int(query.shape[0]))
            n = len(self._ids)
            if n == 0 or k <= 0:
                return {}
            scores = products(self._matrix[:n], query)
            own = self._row.get(exclude)
            if own is not None:
                scores[own] = -np.inf
            count = min(k, n - (own is not None))
            if count <= 0:
                return {}
            best = np.argpartition(-scores, count - 1)[:count]
            return {self._ids[int(i)]: float(scores[int(i)]) for i in best}

    def cosines(self, ids: Iterable[str], query: npt.NDArray[np.float32]) -> dict[str, float]:
        """The cosines with ``query`` of those of ``ids`` the matrix holds (as last refreshed)."""
        with self._lock:
            rows = [(i, self._row[i]) for i in ids if i in self._row]
            if not rows or self._matrix is None or self._matrix.shape[1] != query.shape[0]:
                return {}
            scores = products(self._matrix[[r for _i, r in rows]], query)
            return {i: float(s) for (i, _r), s in zip(rows, scores, strict=True)}

    def discard(self, ids: Iterable[str]) -> None:
        """Drop memories the database no longer holds as active (a purge deletes the row, which
        leaves no change number behind: the gate reports the ids its candidates' read missed)."""
        with self._lock:
            for memory_id in ids:
                self._remove(memory_id)
                self._pending.pop(memory_id, None)

    # ------------------------------------------------------------------ keeping in step
    def _refresh(self, embedder: str, dim: int) -> None:
        if self._embedder != embedder or self._matrix is None or self._matrix.shape[1] != dim:
            self._build(embedder, dim)
        else:
            self._catch_up()

    def _build(self, embedder: str, dim: int) -> None:
        import numpy as np

        with self._db.read() as session:
            mark = int(session.execute(select(func.max(_MEMORIES.c.rev))).scalar() or 0)
            active = {
                str(i) for i in session.execute(select(_MEMORIES.c.id).where(_MEMORIES.c.state == "active")).scalars()
            }
            rows = session.execute(
                select(chunks.c.doc_id, chunks.c.embedding).where(
                    chunks.c.doc_id >= DOC_PREFIX,
                    chunks.c.doc_id < DOC_END,
                    stamped_with(embedder),
                    chunks.c.embedding.is_not(None),
                )
            ).all()
        self._embedder = embedder
        self._mark = mark
        self._matrix = np.zeros((max(1024, len(active) + len(active) // 4), dim), dtype=np.float32)
        self._ids = []
        self._row = {}
        self._pending = {}
        self._add(self._means(rows, active, dim))
        self._pending = dict.fromkeys(sorted(active - set(self._row)))

    def _catch_up(self) -> None:
        with self._db.read() as session:
            changed = session.execute(
                select(_MEMORIES.c.id, _MEMORIES.c.state, _MEMORIES.c.rev)
                .where(_MEMORIES.c.rev > self._mark)
                .order_by(_MEMORIES.c.rev)
            ).all()
        wanted: dict[str, None] = {}
        for memory_id, state, rev in changed:
            self._remove(str(memory_id))
            self._pending.pop(str(memory_id), None)
            if state == "active":
                wanted[str(memory_id)] = None
            else:
                wanted.pop(str(memory_id), None)
            self._mark = max(self._mark, int(rev))
        retry = [i for i in list(self._pending)[:_PENDING_PER_CALL] if i not in wanted]
        look = list(wanted) + retry
        if not look:
            return
        rows: list[Any] = []
        settled: set[str] = set()
        with self._db.read() as session:
            for start in range(0, len(look), _BATCH):
                ids = look[start : start + _BATCH]
                docs = [f"{DOC_PREFIX}{i}" for i in ids]
                rows += session.execute(
                    select(chunks.c.doc_id, chunks.c.embedding).where(
                        chunks.c.doc_id.in_(docs), stamped_with(str(self._embedder)), chunks.c.embedding.is_not(None)
                    )
                ).all()
                settled |= self._settled(session, ids, docs)
        found = self._means(rows, settled, int(self._matrix.shape[1]))
        self._add(found)
        for memory_id in retry:
            self._pending.pop(memory_id, None)
            if memory_id not in self._row:
                self._pending[memory_id] = None  # to the back: the others are looked up first
        for memory_id in wanted:
            if memory_id not in self._row:
                self._pending[memory_id] = None

    def _settled(self, session: Any, ids: Sequence[str], docs: Sequence[str]) -> set[str]:
        """Those of ``ids`` whose document is indexed, with this embedder, from the text their row
        gives. A text changed in place (``dokoro memory reindex`` commits the row, then indexes it)
        still has the old text's chunks until then; the memory waits among the pending instead of
        entering the matrix with them, since re-indexing leaves no change number to catch."""
        texts = session.execute(
            select(_MEMORIES.c.id, _MEMORIES.c.title, _MEMORIES.c.body, _MEMORIES.c.entities).where(
                _MEMORIES.c.id.in_(ids)
            )
        ).all()
        indexed = {
            str(doc_id): (str(digest), embedder)
            for doc_id, digest, embedder in session.execute(
                select(doc_vectors.c.doc_id, doc_vectors.c.content_hash, doc_vectors.c.embedder).where(
                    doc_vectors.c.doc_id.in_(docs)
                )
            ).all()
        }
        return {str(m.id) for m in texts if indexed.get(f"{DOC_PREFIX}{m.id}") == (doc_hash(m), self._embedder)}

    @staticmethod
    def _means(rows: Sequence[Any], keep: set[str], dim: int) -> list[tuple[str, Any]]:
        """(memory id, unit mean vector) of the chunks in ``rows`` whose memory is in ``keep``."""
        import numpy as np

        sums: dict[str, Any] = {}
        for doc_id, blob in rows:
            memory_id = str(doc_id)[len(DOC_PREFIX) :]
            if memory_id not in keep:
                continue
            vector = np.frombuffer(bytes(blob), dtype="<f4")
            if vector.shape[0] != dim:
                continue
            sums[memory_id] = sums[memory_id] + vector if memory_id in sums else vector.astype(np.float32)
        if not sums:
            return []
        from dokoro_store.retrieval.embedders import normalise_rows

        return list(zip(sums, normalise_rows(list(sums.values())), strict=True))

    def _add(self, vectors: Sequence[tuple[str, Any]]) -> None:
        import numpy as np

        for memory_id, vector in vectors:
            row = self._row.get(memory_id)
            if row is None:
                row = len(self._ids)
                if row >= self._matrix.shape[0]:
                    grown = np.zeros((self._matrix.shape[0] * 2, self._matrix.shape[1]), dtype=np.float32)
                    grown[:row] = self._matrix[:row]
                    self._matrix = grown
                self._ids.append(memory_id)
                self._row[memory_id] = row
            self._matrix[row] = vector

    def _remove(self, memory_id: str) -> None:
        """Drop a memory's row (the last row takes its place)."""
        row = self._row.pop(memory_id, None)
        if row is None:
            return
        last = len(self._ids) - 1
        if row != last:
            moved = self._ids[last]
            self._matrix[row] = self._matrix[last]
            self._ids[row] = moved
            self._row[moved] = row
        self._ids.pop()
