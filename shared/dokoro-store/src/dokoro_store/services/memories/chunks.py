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

Kept in step as :class:`~dokoro_store.services.memories.vectors.ActiveVectors` is: built once per
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

from sqlalchemy import String, func, select, text, type_coerce

from dokoro_store.clock import parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.retrieval.embedders import products
from dokoro_store.retrieval.scope import among
from dokoro_store.retrieval.tables import chunks, doc_vectors, stamped_with
from dokoro_store.retrieval.vectors import VectorHit
from dokoro_store.services.memories.rows import DOC_END, DOC_PREFIX, DOC_TYPE, doc_hash

if TYPE_CHECKING:
    from dokoro_store.retrieval.scope import DocScope, MemoryScope

__all__ = ["SERVED_FROM", "MemoryChunks"]

# Memories from which recall's vector leg is served here. Below, the engine's own exact scan in
# memory (LanceDB's below 2k vectors) or a flat scan is as fast, and no matrix is worth holding.
SERVED_FROM = 2_000
_RECHECK_PER_CALL = 64  # unsettled memories read again per search at most
_BATCH = 500  # ids per IN (...) statement
_TRIES = 3  # searches run again after their hits failed the check, before the engine answers instead
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
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
        self._state: Any = None  # int8 code of the row's memory state (see _codes)
        self._type: Any = None  # int8 code of its type
        self._created: Any = None  # int64 microseconds: its creation time
        self._rows: dict[str, list[int]] = {}  # memory id → its rows (a memory without chunks: [])
        # Entity → memory ids and memory id → its entities as stored: read on the first search that
        # names an entity (None until then), kept in step after.
        self._by_entity: dict[str, set[str]] | None = None
        self._entities: dict[str, tuple[str, ...]] = {}
        self._codes: dict[str, int] = {}  # state or type name → its code
        self._unsettled: dict[str, None] = {}  # memories whose document is not indexed as their row says
        self._known: dict[str, int] = {}  # memories being added → their place in _facts
        self._facts: Any = None  # int64 (memories being added, 3): state code, type code, creation time

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
                failed = self._failed(hits)
                if not failed:
                    return hits
                self._load(sorted(failed))  # read again: changed, purged or re-indexed meanwhile
        return None

    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Any]] | None:
        """(chunk id, document id, vector) of the chunks of ``doc_ids`` as the last search saw them:
        the fusion scores every candidate from them without reading the vectors again (and without
        waiting on the engine, whose lock a LanceDB write behind may hold). None when one of them is
        not a memory this matrix holds as indexed (the fusion then reads them all)."""
        with self._lock:
            if embedder != self._embedder or self._matrix is None:
                return None
            found: list[tuple[str, str, Any]] = []
            for doc_id in dict.fromkeys(doc_ids):
                memory_id = doc_id[len(DOC_PREFIX) :]
                rows = self._rows.get(memory_id) if doc_id.startswith(DOC_PREFIX) else None
                if rows is None or memory_id in self._unsettled:
                    return None
                found += [(self._chunk_ids[r], doc_id, self._matrix[r].copy()) for r in rows]
            return found

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
            scores = products(self._matrix[:n], query)
            rows = None
        else:
            rows = np.flatnonzero(mask)
            if rows.shape[0] == 0:
                return []
            if rows.shape[0] * 2 > n:  # most rows: one pass over the matrix, then the mask
                scores = products(self._matrix[:n], query)[rows]
            else:
                scores = products(self._matrix[rows], query)
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
            rows = [r for m in self._named(memory.entity) for r in self._rows.get(m, ())]
            named = np.zeros(n, dtype=bool)
            named[rows] = True
            narrow(named)
        return mask

    def _failed(self, hits: Sequence[VectorHit]) -> set[str]:
        """The memories of ``hits`` no longer stored (one query). Only their rows are read: the
        chunks a search hits are scattered over the largest table, and reading them cost ~2 ms at
        100k (pages out of the cache) where the memories' ids are one small index."""
        if not hits:
            return set()
        owners = list(dict.fromkeys(h.doc_id[len(DOC_PREFIX) :] for h in hits))
        member, value = among("id", owners, self._db.dialect, "ids")
        with self._db.read() as session:
            live = set(session.execute(text(f"SELECT id FROM memories WHERE {member}"), {"ids": value}).scalars())
        return {m for m in owners if m not in live}

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

        self._embedder = embedder
        self._matrix = None  # until this build is done: a failed one is made again on the next search
        self._chunk_ids, self._owner = [], []
        self._rows, self._entities, self._by_entity, self._unsettled = {}, {}, None, {}
        with self._db.read() as session:
            self._mark = int(session.execute(select(func.max(_MEMORIES.c.rev))).scalar() or 0)
            # The creation times as stored (SQLite: fixed-width ISO text, read in one numpy call).
            memories = session.execute(
                select(_MEMORIES.c.id, _MEMORIES.c.state, _MEMORIES.c.type, type_coerce(_MEMORIES.c.created_at, String))
            ).all()
            self._add_memories(
                [str(m[0]) for m in memories],
                [str(m[1]) for m in memories],
                [str(m[2]) for m in memories],
                _all_micros([m[3] for m in memories]),
                None,
            )
            # One chunk per memory for most: room for them and a quarter more.
            size = max(1024, len(memories) + len(memories) // 4)
            self._matrix = np.zeros((size, dim), dtype=np.float32)
            self._state = np.zeros(size, dtype=np.int8)
            self._type = np.zeros(size, dtype=np.int8)
            self._created = np.zeros(size, dtype=np.int64)
            del memories
            # Streamed: the vectors go into the matrix a batch at a time, never all as bytes at once.
            found = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding)
                .where(
                    chunks.c.doc_id >= DOC_PREFIX,
                    chunks.c.doc_id < DOC_END,
                    stamped_with(embedder),
                    chunks.c.embedding.is_not(None),
                )
                .execution_options(yield_per=4096)
            )
            for batch in found.partitions():
                self._add_chunks(batch)

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
                    select(
                        _MEMORIES.c.id,
                        _MEMORIES.c.state,
                        _MEMORIES.c.type,
                        _MEMORIES.c.created_at,
                        _MEMORIES.c.entities,
                        _MEMORIES.c.title,
                        _MEMORIES.c.body,
                    ).where(_MEMORIES.c.id.in_(ids))
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
        self._add_memories(
            [str(m.id) for m in memories],
            [str(m.state) for m in memories],
            [str(m.type) for m in memories],
            [_micros(m.created_at) for m in memories],
            {str(m.id): tuple(str(e) for e in m.entities or ()) for m in memories},
        )
        self._add_chunks(rows)
        for memory in memories:
            # Settled: its document is indexed, with this embedder, from the text its row gives.
            digest, embedder = indexed.get(f"{DOC_PREFIX}{memory.id}", ("", None))
            if digest != doc_hash(memory) or embedder != self._embedder:
                self._unsettled[str(memory.id)] = None

    def _add_memories(
        self,
        ids: list[str],
        states: list[str],
        types: list[str],
        created: Any,
        entities: dict[str, tuple[str, ...]] | None,
    ) -> None:
        """Know these memories (their chunks follow, :meth:`_add_chunks`); ``entities``: theirs, or
        None when the entity index is not read yet."""
        import numpy as np

        for name in {*states, *types}:
            self._codes.setdefault(name, len(self._codes))
        codes = self._codes
        self._known = {memory_id: i for i, memory_id in enumerate(ids)}
        self._facts = np.empty((len(ids), 3), dtype=np.int64)
        self._facts[:, 0] = [codes[x] for x in states]
        self._facts[:, 1] = [codes[x] for x in types]
        self._facts[:, 2] = created
        self._rows.update((memory_id, []) for memory_id in ids)
        if self._by_entity is not None and entities is not None:
            for memory_id, named in entities.items():
                self._entities[memory_id] = named
                for entity in named:
                    self._by_entity.setdefault(entity, set()).add(memory_id)

    def _named(self, entity: str) -> set[str]:
        """The memories naming ``entity`` (the index read from the database the first time)."""
        if self._by_entity is None:
            if self._db.dialect == "postgresql":
                pairs = "SELECT m.id, e.value FROM memories m, jsonb_array_elements_text(CAST(m.entities AS jsonb)) e"
            else:
                pairs = "SELECT m.id, e.value FROM memories m, json_each(m.entities) e"
            entities: dict[str, list[str]] = {}
            with self._db.read() as session:
                for memory_id, name in session.execute(text(pairs)).all():
                    entities.setdefault(str(memory_id), []).append(str(name))
            by_entity: dict[str, set[str]] = {}
            for memory_id, names in entities.items():
                for name in names:
                    by_entity.setdefault(name, set()).add(memory_id)
            self._entities = {memory_id: tuple(names) for memory_id, names in entities.items()}
            self._by_entity = by_entity
        return self._by_entity.get(entity, set())

    def _add_chunks(self, rows: Sequence[Any]) -> None:
        """Add the chunk ``rows`` (chunk id, document id, vector) whose memory :meth:`_add_memories`
        just named (others: a memory added since, read on the next search)."""
        import numpy as np

        dim = int(self._matrix.shape[1])
        known = self._known
        placed = [(r, str(r[1])[len(DOC_PREFIX) :]) for r in rows]
        placed = [(r, m) for r, m in placed if m in known and len(r[2]) == 4 * dim]
        if not placed:
            return
        start = len(self._chunk_ids)
        end = start + len(placed)
        if end > self._matrix.shape[0]:
            capacity = max(end, self._matrix.shape[0] * 2)
            self._matrix = _grown(self._matrix, capacity, start)
            self._state = _grown(self._state, capacity, start)
            self._type = _grown(self._type, capacity, start)
            self._created = _grown(self._created, capacity, start)
        self._matrix[start:end] = np.frombuffer(b"".join(bytes(r[2]) for r, _m in placed), dtype="<f4").reshape(-1, dim)
        facts = self._facts[np.fromiter((known[m] for _r, m in placed), dtype=np.int64, count=len(placed))]
        self._state[start:end] = facts[:, 0]
        self._type[start:end] = facts[:, 1]
        self._created[start:end] = facts[:, 2]
        self._chunk_ids += [str(r[0]) for r, _m in placed]
        self._owner += [m for _r, m in placed]
        rows_of = self._rows
        for at, (_r, memory_id) in enumerate(placed, start):
            rows_of[memory_id].append(at)

    def _remove(self, memory_id: str) -> None:
        """Drop a memory and its rows (the last rows take their places)."""
        for entity in self._entities.pop(memory_id, ()):
            members = self._by_entity.get(entity) if self._by_entity is not None else None
            if members is not None:
                members.discard(memory_id)
                if not members:
                    del self._by_entity[entity]  # type: ignore[union-attr]
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


def _all_micros(values: Sequence[Any]) -> Any:
    """:func:`_micros` of many creation times as stored, as an int64 array: SQLite's fixed-width ISO
    text in one numpy call (one by one if any is not in that form), PostgreSQL's datetimes one by one."""
    import numpy as np

    if values and isinstance(values[0], str):
        try:
            stored = np.array(values, dtype="U28")
            if bool(np.all(np.char.str_len(stored) == 27)) and bool(np.all(np.char.endswith(stored, "Z"))):
                return stored.astype("U26").astype("datetime64[us]").astype(np.int64)  # "U26": without the Z
        except (TypeError, ValueError):
            pass
    return np.array([_micros(v if isinstance(v, datetime) else parse_iso(str(v))) for v in values], dtype=np.int64)


def _grown(array: Any, capacity: int, used: int) -> Any:
    import numpy as np

    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:used] = array[:used]
    return grown
