"""The vector leg of a recall on a large store: the memories' chunk vectors held in one matrix per
process, scanned exactly.

A recall searches the memory documents only (``DocScope(doc_types=("memory",), memory=...)``). On a
store of :data:`SERVED_FROM` memories or more its vector leg is answered here instead of by the
vector engine: every chunk of every memory document (any state) is one row of a float32 matrix,
with its memory's state, type and creation time beside it and an index of the memories by entity,
so the scope's conditions are a mask and the answer is the ``k`` best allowed chunks of one
matrix-vector product — exactly what the engine's scoped search returns (the nearest allowed
chunks), without LanceDB's query and the SQL check of its hits' scope (24 ms of a 50 ms recall at
100k memories; the scan costs ~7 ms there: ``docs/benchmarks.md``, "Recall's vector leg in memory").
Below :data:`SERVED_FROM` the engine answers (an exact scan in memory below its own threshold), and no
matrix is held.

Kept in step as :class:`~dokoro_store.services.memory_vectors.ActiveVectors` is: built once per
process (one read of the memories and their chunks), then each search reads the memories whose
change number (``rev``, migration 0019) is above the last one seen and reads their rows and chunks
again — another process's remember, forget or edit is seen on the next search. Two writes leave no
change number behind, and are caught otherwise:

- a purge deletes the row: the hits a search returns are checked in one query (their chunk is
  still stored, with this embedder, and their memory still exists); a memory that fails is read
  again (or dropped) and the search runs again;
- an edit re-indexes the memory's document after the row changed: a memory whose indexed
  document (``doc_vectors``) does not yet hold the text its row gives is *unsettled* and read again
  on the following searches (at most :data:`_RECHECK_PER_CALL` a call) until it does.

A scope this module cannot read (another document type, document statuses) goes to the engine.
The price is memory: 4 × dim bytes per chunk (100k × 256 → 100 MB of RSS per process that recalls).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, text

from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.retrieval.markdown_docs import content_hash
from dokoro_store.retrieval.scope import among
from dokoro_store.retrieval.tables import chunks, doc_vectors, stamped_with
from dokoro_store.retrieval.vectors import VectorHit
from dokoro_store.secrets import redact
from dokoro_store.services.memory_rows import DOC_PREFIX, DOC_TYPE, doc_text

if TYPE_CHECKING:
    from dokoro_store.retrieval.scope import DocScope, MemoryScope

__all__ = ["SERVED_FROM", "MemoryChunks"]

# Memories from which recall's vector leg is served here. Below, the engine's own exact scan in
# memory (LanceDB's below 2k vectors) or a flat scan is as fast, and no matrix is worth holding.
SERVED_FROM = 2_000
_RECHECK_PER_CALL = 64  # unsettled memories read again per search at most
_BATCH = 500  # ids per IN (...) statement
_TRIES = 3  # searches run again after their hits failed the check, before the engine answers instead
_DOC_END = DOC_PREFIX[:-1] + chr(ord(DOC_PREFIX[-1]) + 1)  # "memory:" < doc id < "memory;"
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
_COLUMNS = (
    _MEMORIES.c.id,
    _MEMORIES.c.state,
    _MEMORIES.c.type,
    _MEMORIES.c.created_at,
    _MEMORIES.c.entities,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(when: datetime) -> int:
    """Microseconds since the epoch (a naive time is UTC, as the database stores it)."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(microseconds=1)


class MemoryChunks:
    """The memory documents' chunk vectors and what recall filters them on (module doc); thread-safe."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._large = False  # SERVED_FROM memories seen once: served here for the life of the process
        self._embedder: str | None = None
        self._mark = 0  # the highest memory rev applied
        self._matrix: Any = None  # float32 (capacity, dim); rows [0, len(_chunk_ids)) are in use
        self._chunk_ids: list[str] = []
        self._owner: list[str] = []  # memory id of each row
        self._state: Any = None  # int8 code of the row's memory state (see _code)
        self._type: Any = None  # int8 code of its type
        self._created: Any = None  # int64 microseconds: its creation time
        self._rows: dict[str, list[int]] = {}  # memory id → its rows (a memory without chunks: [])
        self._entities: dict[str, tuple[str, ...]] = {}  # memory id → its entities as stored
        self._by_entity: dict[str, set[str]] = {}  # entity → memory ids
        self._codes: dict[str, int] = {}  # state or type name → its code
        self._unsettled: dict[str, None] = {}  # memories whose document is not indexed as their row says

    def __len__(self) -> int:
        return len(self._chunk_ids)

    # ------------------------------------------------------------------ queries
    def search(self, vector: Any, embedder: str, k: int, scope: DocScope) -> list[VectorHit] | None:
        """The ``k`` chunks nearest ``vector`` among the memory chunks ``scope`` allows, stamped
        ``embedder``, as the vector engine answers; None when the engine should answer (a scope
        not about memories only, or a small store)."""
        import numpy as np

        memory = scope.memory
        if memory is None or scope.doc_types != (DOC_TYPE,) or scope.statuses or not self._served():
            return None
        query = np.asarray(vector, dtype=np.float32)
        with self._lock:
            self._refresh(embedder, int(query.shape[0]))
            for _try in range(_TRIES):
                hits = self._nearest(query, k, memory)
                failed = self._failed(hits, embedder)
                if not failed:
                    return hits
                self._load(sorted(failed))  # read again: changed, purged or re-indexed meanwhile
        return None

    def _served(self) -> bool:
        if not self._large:
            with self._db.read() as session:
                few = select(_MEMORIES.c.id).limit(SERVED_FROM).subquery()
                self._large = int(session.execute(select(func.count()).select_from(few)).scalar() or 0) >= SERVED_FROM
        return self._large

    def _nearest(self, query: Any, k: int, memory: MemoryScope) -> list[VectorHit]:
        import numpy as np

        n = len(self._chunk_ids)
        if n == 0 or k <= 0:
            return []
        mask = self._allowed(memory, n)
        if mask is None:
            scores = np.einsum("ij,j->i", self._matrix[:n], query)  # numpy's loop, not BLAS threads
            rows = None
        else:
            rows = np.flatnonzero(mask)
            if rows.shape[0] == 0:
                return []
            if rows.shape[0] * 2 > n:  # most rows: one pass over the matrix, then the mask
                scores = np.einsum("ij,j->i", self._matrix[:n], query)[rows]
            else:
                scores = np.einsum("ij,j->i", self._matrix[rows], query)
        count = min(k, scores.shape[0])
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        hits = []
        for i in best:
            row = int(i) if rows is None else int(rows[int(i)])
            hits.append(VectorHit(self._chunk_ids[row], DOC_PREFIX + self._owner[row], float(scores[int(i)])))
        return hits

    def _allowed(self, memory: MemoryScope, n: int) -> Any:
        """The rows ``memory`` allows as a boolean mask (None: every row)."""
        import numpy as np

        mask: Any = None

        def narrow(condition: Any) -> None:
            nonlocal mask
            mask = condition if mask is None else mask & condition

        if memory.states:
            narrow(np.isin(self._state[:n], [self._codes.get(s, -1) for s in memory.states]))
        if memory.types:
            narrow(np.isin(self._type[:n], [self._codes.get(t, -1) for t in memory.types]))
        if memory.since is not None:
            narrow(self._created[:n] >= _micros(memory.since))
        if memory.until is not None:
            narrow(self._created[:n] <= _micros(memory.until))
        if memory.entity:
            rows = [r for m in self._by_entity.get(memory.entity, ()) for r in self._rows.get(m, ())]
            named = np.zeros(n, dtype=bool)
            named[rows] = True
            narrow(named)
        return mask

    def _failed(self, hits: Sequence[VectorHit], embedder: str) -> set[str]:
        """The memories of ``hits`` whose chunk is no longer stored with ``embedder`` or whose row is
        gone (one query)."""
        if not hits:
            return set()
        member, value = among("c.chunk_id", [h.chunk_id for h in hits], self._db.dialect, "ids")
        statement = text(
            f"SELECT c.chunk_id FROM chunks c WHERE {member} AND coalesce(c.embedder, '') = :embedder "
            f"AND EXISTS (SELECT 1 FROM memories m WHERE m.id = substr(c.doc_id, {len(DOC_PREFIX) + 1}))"
        )
        with self._db.read() as session:
            live = set(session.execute(statement, {"ids": value, "embedder": embedder}).scalars())
        return {h.doc_id[len(DOC_PREFIX) :] for h in hits if h.chunk_id not in live}

    # ------------------------------------------------------------------ keeping in step
    def _refresh(self, embedder: str, dim: int) -> None:
        if self._embedder != embedder or self._matrix is None or self._matrix.shape[1] != dim:
            self._build(embedder, dim)
            return
        with self._db.read() as session:
            changed = session.execute(
                select(_MEMORIES.c.id, _MEMORIES.c.rev).where(_MEMORIES.c.rev > self._mark).order_by(_MEMORIES.c.rev)
            ).all()
        for _memory_id, rev in changed:
            self._mark = max(self._mark, int(rev))
        look = dict.fromkeys(str(r[0]) for r in changed)
        for memory_id in list(self._unsettled)[:_RECHECK_PER_CALL]:
            look[memory_id] = None
        if look:
            self._load(list(look))

    def _build(self, embedder: str, dim: int) -> None:
        import numpy as np

        with self._db.read() as session:
            mark = int(session.execute(select(func.max(_MEMORIES.c.rev))).scalar() or 0)
            memories = session.execute(select(*_COLUMNS)).all()
            rows = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding)
                .where(
                    chunks.c.doc_id >= DOC_PREFIX,
                    chunks.c.doc_id < _DOC_END,
                    stamped_with(embedder),
                    chunks.c.embedding.is_not(None),
                )
                .order_by(chunks.c.doc_id, chunks.c.chunk_index)
            ).all()
        capacity = max(1024, len(rows) + len(rows) // 4)
        self._embedder = embedder
        self._mark = mark
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._state = np.zeros(capacity, dtype=np.int8)
        self._type = np.zeros(capacity, dtype=np.int8)
        self._created = np.zeros(capacity, dtype=np.int64)
        self._chunk_ids, self._owner = [], []
        self._rows, self._entities, self._by_entity, self._unsettled = {}, {}, {}, {}
        self._place(memories, rows)

    def _load(self, memory_ids: Sequence[str]) -> None:
        """Read these memories' rows and chunks again (a memory no longer stored leaves the matrix)."""
        memories: list[Any] = []
        rows: list[Any] = []
        indexed: dict[str, tuple[str, str | None]] = {}
        with self._db.read() as session:
            for start in range(0, len(memory_ids), _BATCH):
                ids = list(memory_ids[start : start + _BATCH])
                docs = [f"{DOC_PREFIX}{i}" for i in ids]
                memories += session.execute(
                    select(*_COLUMNS, _MEMORIES.c.title, _MEMORIES.c.body).where(_MEMORIES.c.id.in_(ids))
                ).all()
                rows += session.execute(
                    select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding)
                    .where(
                        chunks.c.doc_id.in_(docs), stamped_with(str(self._embedder)), chunks.c.embedding.is_not(None)
                    )
                    .order_by(chunks.c.doc_id, chunks.c.chunk_index)
                ).all()
                indexed.update(
                    (str(d), (str(h), e))
                    for d, h, e in session.execute(
                        select(doc_vectors.c.doc_id, doc_vectors.c.content_hash, doc_vectors.c.embedder).where(
                            doc_vectors.c.doc_id.in_(docs)
                        )
                    ).all()
                )
        for memory_id in memory_ids:
            self._remove(memory_id)
            self._unsettled.pop(memory_id, None)
        self._place(memories, rows)
        for memory in memories:
            # Settled: its document is indexed, with this embedder, from the text its row gives.
            digest, embedder = indexed.get(f"{DOC_PREFIX}{memory.id}", ("", None))
            wanted = content_hash(redact(doc_text(memory)).text)
            if digest != wanted or embedder != self._embedder:
                self._unsettled[str(memory.id)] = None

    def _code(self, name: str) -> int:
        return self._codes.setdefault(name, len(self._codes))

    def _place(self, memories: Sequence[Any], rows: Sequence[Any]) -> None:
        """Add ``memories`` (rows of :data:`_COLUMNS`) and those of the chunk ``rows`` that belong
        to one of them."""
        import numpy as np

        dim = int(self._matrix.shape[1])
        known: dict[str, tuple[int, int, int]] = {}
        for memory in memories:
            memory_id = str(memory.id)
            known[memory_id] = (self._code(str(memory.state)), self._code(str(memory.type)), _micros(memory.created_at))
            self._rows[memory_id] = []
            entities = tuple(str(e) for e in (memory.entities or ()))
            self._entities[memory_id] = entities
            for entity in entities:
                self._by_entity.setdefault(entity, set()).add(memory_id)
        placed = [(r, str(r[1])[len(DOC_PREFIX) :]) for r in rows]
        placed = [(r, m) for r, m in placed if m in known and len(r[2]) == 4 * dim]
        start = len(self._chunk_ids)
        end = start + len(placed)
        if end > self._matrix.shape[0]:
            capacity = max(end, self._matrix.shape[0] * 2)
            self._matrix = _grown(self._matrix, capacity, start)
            self._state = _grown(self._state, capacity, start)
            self._type = _grown(self._type, capacity, start)
            self._created = _grown(self._created, capacity, start)
        if not placed:
            return
        self._matrix[start:end] = np.frombuffer(b"".join(bytes(r[2]) for r, _m in placed), dtype="<f4").reshape(-1, dim)
        for offset, (row, memory_id) in enumerate(placed):
            state, kind, created = known[memory_id]
            at = start + offset
            self._state[at], self._type[at], self._created[at] = state, kind, created
            self._chunk_ids.append(str(row[0]))
            self._owner.append(memory_id)
            self._rows[memory_id].append(at)

    def _remove(self, memory_id: str) -> None:
        """Drop a memory and its rows (the last rows take their places)."""
        for entity in self._entities.pop(memory_id, ()):
            members = self._by_entity.get(entity)
            if members is not None:
                members.discard(memory_id)
                if not members:
                    del self._by_entity[entity]
        for row in sorted(self._rows.pop(memory_id, ()), reverse=True):
            last = len(self._chunk_ids) - 1
            if row != last:
                moved = self._owner[last]
                self._matrix[row] = self._matrix[last]
                self._state[row], self._type[row], self._created[row] = (
                    self._state[last],
                    self._type[last],
                    self._created[last],
                )
                self._chunk_ids[row] = self._chunk_ids[last]
                self._owner[row] = moved
                moved_rows = self._rows[moved]
                moved_rows[moved_rows.index(last)] = row
            self._chunk_ids.pop()
            self._owner.pop()


def _grown(array: Any, capacity: int, used: int) -> Any:
    import numpy as np

    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:used] = array[:used]
    return grown
