"""The memory vector index: every memory chunk's vector in one matrix per process, scanned
exactly, serving both readers of the memories' vectors.

- **Recall** (its vector leg on a store of :data:`SERVED_FROM` memories or more, through
  :attr:`SearchService.scoped_vectors`): the ``k`` best chunks the scope allows. Each row has its
  memory's state, type and creation time beside it, and the memories are indexed by entity, so the
  scope's conditions are a mask and the answer is exactly the vector engine's scoped answer (the
  nearest allowed chunks) without LanceDB's query and the SQL check of its hits' scope.
- **The conflict gate** (past the active memories it compares one by one): the ``k`` active
  memories nearest a new one, by the cosine of their *mean* vectors — the unit mean of a
  memory's chunks, which the gate's thresholds are calibrated on. It is read from the same rows:
  ``cos(mean, q) = Σ cᵢ·q / ‖Σ cᵢ‖``, so each row carries its memory's ``1 / ‖Σ cᵢ‖`` (zero for
  a memory the gate must not see: not active, or its vectors not the text its row gives), and a
  memory's cosine is the sum of its rows' weighted products. One chunk per memory (most): the
  row's own cosine.

One matrix, one build, one catch-up rule. Built once per process (one read of the memories and
their chunks, streamed), then kept in step by the memories' change numbers (``rev``, migration
0019: every insert and every change of a memory's state or text gives its row a new, higher
number, committed in order): each query reads the memories whose rev is above the last one seen
(through the index on ``rev``: O(changed rows), never every row) and reads their rows and chunks
again. So another process's remember, forget or edit is seen by this one's next recall or gate.
Two writes leave no change number behind, and are caught otherwise:

- a purge deletes the row: recall's hits are checked in one query (their memory still exists),
  the gate reads its candidates' rows anyway; a memory found missing is read again (dropped) and
  the query runs again;
- indexing writes a memory's vectors after its row (another process's remember committed but not
  indexed yet; ``dokoro memory reindex`` commits a changed text, then indexes it): a memory whose
  indexed document (``doc_vectors``) does not yet hold the text its row gives is *unsettled* —
  kept out of the gate, recall's vectors of it not handed to the fusion — and read again on the
  following queries (at most :data:`RECHECK_PER_CALL` a query) until it is.

The price is memory: 4 × dim bytes per chunk (100k × 256 → 100 MB of RSS per process that recalls
or remembers on a large store). Two matrices (one per reader) held twice that and built twice.

**Why LanceDB still holds the memories.** The engine (LanceDB on the embedded backend, pgvector
on PostgreSQL) is what ``search_universal`` asks across every document type, memories among them,
and what recall asks on a store below :data:`SERVED_FROM` memories (where holding a matrix is not
worth it). Leaving the memories out of the engine would make every cross-type search merge two
legs under one scope; the memory calls on a large store never wait on the engine (its copy is
written behind, on its own thread, after the answer).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, func, select, text, type_coerce

from dokoro_store.db.engine import Database
from dokoro_store.index.arithmetic import products
from dokoro_store.index.scope import among
from dokoro_store.index.vectors.index import VectorHit
from dokoro_store.index.vectors.row_matrix import RowMatrix
from dokoro_store.models.index import chunks, doc_vectors, stamped_with
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories.rows import DOC_END, DOC_PREFIX, DOC_TYPE, doc_hash
from dokoro_store.semantic.memories.vectors.facts import all_micros, micros, scope_mask

if TYPE_CHECKING:
    from dokoro_store.index.scope import DocScope

__all__ = ["RECHECK_PER_CALL", "SERVED_FROM", "MemoryIndex"]

# Memories from which recall's vector leg is served here. Below, the engine's own exact scan in
# memory (LanceDB's below 2k vectors) or a flat scan is as fast, and no matrix is worth holding.
SERVED_FROM = 2_000
RECHECK_PER_CALL = 64  # unsettled memories read again per query at most
_BATCH = 500  # ids per IN (...) statement
_TRIES = 3  # recalls run again after their hits failed the check, before the engine answers instead
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
_COLUMNS = {"state": "int8", "type": "int8", "created": "int64", "slot": "int32", "weight": "float32"}


class MemoryIndex:
    """The memory chunks' vectors and what recall filters them on (module doc); thread-safe."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._large = False  # SERVED_FROM memories seen once: recall served here for the life of the process
        self._embedder: str | None = None
        self._mark = 0  # the highest memory rev applied
        self._rows_matrix: RowMatrix | None = None  # None until built (and while a build runs)
        self._chunk_ids: list[str] = []  # chunk id of each row
        self._owner: list[str] = []  # memory id of each row
        self._rows: dict[str, list[int]] = {}  # memory id → its rows (a memory without chunks: [])
        self._slot: dict[str, int] = {}  # memory id → its slot (the gate sums its rows' cosines there)
        self._slot_ids: list[str | None] = []  # slot → memory id (None: free)
        self._free: list[int] = []  # free slots
        self._codes: dict[str, int] = {}  # state or type name → its code
        self._unsettled: dict[str, None] = {}  # memories whose document is not indexed as their row says
        # Entity → memory ids and memory id → its entities as stored: read on the first recall that
        # names an entity (None until then), kept in step after.
        self._by_entity: dict[str, set[str]] | None = None
        self._entities: dict[str, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self._chunk_ids)

    def holds(self, memory_id: str) -> bool:
        """Whether the gate sees ``memory_id`` (active, its vectors its text's), as last caught up."""
        with self._lock:
            rows = self._rows.get(memory_id) or []
            held = self._rows_matrix
            return bool(rows) and held is not None and bool(held.columns["weight"][rows[0]] > 0)

    def unsettled(self) -> list[str]:
        """The memories waiting for their text's vectors, as last caught up."""
        with self._lock:
            return list(self._unsettled)

    # ------------------------------------------------------------------ recall
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
            held = self._refresh(embedder, int(query.shape[0]))
            for _try in range(_TRIES):
                n = len(held)
                if n == 0 or k <= 0:
                    return []
                mask = scope_mask(held, memory, self._codes, lambda entity: self._named_rows(entity))
                hits = self._best(held, query, k, None if mask is None else np.flatnonzero(mask))
                failed = self._failed(hits)
                if not failed:
                    return hits
                self._load(sorted(failed))  # read again: changed, purged or re-indexed meanwhile
        return None

    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Any]] | None:
        """(chunk id, document id, vector) of the chunks of ``doc_ids`` as the last search saw them:
        the fusion scores every candidate from them without reading the vectors again (and without
        waiting on the engine, whose lock a LanceDB write behind may hold). None when one of them is
        not a memory this index holds as indexed (the fusion then reads them all)."""
        with self._lock:
            held = self._rows_matrix
            if embedder != self._embedder or held is None:
                return None
            found: list[tuple[str, str, Any]] = []
            for doc_id in dict.fromkeys(doc_ids):
                memory_id = doc_id[len(DOC_PREFIX) :]
                rows = self._rows.get(memory_id) if doc_id.startswith(DOC_PREFIX) else None
                if rows is None or memory_id in self._unsettled:
                    return None
                found += [(self._chunk_ids[r], doc_id, held.matrix[r].copy()) for r in rows]
            return found

    def _served(self) -> bool:
        if not self._large:
            with self._db.read() as session:
                few = select(_MEMORIES.c.id).limit(SERVED_FROM).subquery()
                self._large = int(session.execute(select(func.count()).select_from(few)).scalar() or 0) >= SERVED_FROM
        return self._large

    def _best(self, held: RowMatrix, query: Any, k: int, rows: Any) -> list[VectorHit]:
        """The ``k`` best of ``rows`` (None: every row) by cosine with ``query``, best first."""
        import numpy as np

        n = len(held)
        if rows is None:
            scores = products(held.vectors(), query)
        elif rows.shape[0] == 0:
            return []
        elif rows.shape[0] * 2 > n:  # most rows: one pass over the matrix, then the mask
            scores = products(held.vectors(), query)[rows]
        else:
            scores = products(held.matrix[rows], query)
        count = min(k, scores.shape[0])
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        hits = []
        for i in best:
            row = int(i) if rows is None else int(rows[int(i)])
            hits.append(VectorHit(self._chunk_ids[row], DOC_PREFIX + self._owner[row], float(scores[int(i)])))
        return hits

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

    def _named_rows(self, entity: str) -> list[int]:
        """The rows of the memories naming ``entity`` (the entity index read the first time)."""
        if self._by_entity is None:
            if self._db.dialect == "postgresql":
                pairs = "SELECT m.id, e.value FROM memories m, jsonb_array_elements_text(CAST(m.entities AS jsonb)) e"
            else:
                pairs = "SELECT m.id, e.value FROM memories m, json_each(m.entities) e"
            entities: dict[str, list[str]] = {}
            with self._db.read() as session:
                for memory_id, name in session.execute(text(pairs)).all():
                    entities.setdefault(str(memory_id), []).append(str(name))
            self._by_entity = {}
            self._entities = {}
            self._know_entities({memory_id: tuple(names) for memory_id, names in entities.items()})
        return [r for m in self._by_entity.get(entity, set()) for r in self._rows.get(m, ())]

    def _know_entities(self, entities: dict[str, tuple[str, ...]]) -> None:
        if self._by_entity is None:
            return
        for memory_id, named in entities.items():
            self._entities[memory_id] = named
            for entity in named:
                self._by_entity.setdefault(entity, set()).add(memory_id)

    # ------------------------------------------------------------------ the gate
    def nearest(self, query: Any, embedder: str, k: int, exclude: str) -> dict[str, float]:
        """The ``k`` active memories nearest ``query`` (not ``exclude``) by the cosine of their
        mean vectors, after catching up with the database."""
        import numpy as np

        with self._lock:
            held = self._refresh(embedder, int(query.shape[0]))
            n = len(held)
            if n == 0 or k <= 0:
                return {}
            weight, slot = held.column("weight"), held.column("slot")
            width = len(self._slot_ids)
            cosines = np.bincount(slot, weights=products(held.vectors(), query) * weight, minlength=width)
            seen = np.zeros(width, dtype=bool)
            seen[slot[weight > 0]] = True
            own = self._slot.get(exclude)
            if own is not None:
                seen[own] = False
            count = min(k, int(seen.sum()))
            if count <= 0:
                return {}
            cosines[~seen] = -np.inf
            best = np.argpartition(-cosines, count - 1)[:count]
            return {str(self._slot_ids[int(i)]): float(cosines[int(i)]) for i in best}

    def cosines(self, ids: Iterable[str], query: Any) -> dict[str, float]:
        """The mean-vector cosines with ``query`` of those of ``ids`` the gate sees (as last caught up)."""
        with self._lock:
            held = self._rows_matrix
            if held is None or held.dim != query.shape[0]:
                return {}
            weight = held.columns["weight"]
            found = {}
            for memory_id in ids:
                rows = self._rows.get(memory_id) or []
                if rows and weight[rows[0]] > 0:
                    found[memory_id] = float((products(held.matrix[rows], query) * weight[rows]).sum())
            return found

    def read_again(self, ids: Iterable[str]) -> None:
        """Read these memories again now (the gate found them purged or retired since: a purge
        leaves no change number behind)."""
        with self._lock:
            if self._rows_matrix is not None:
                self._load(sorted(set(ids)))

    # ------------------------------------------------------------------ keeping in step
    def _refresh(self, embedder: str, dim: int) -> RowMatrix:
        """The matrix, built or caught up: the one catch-up rule (module doc)."""
        held = self._rows_matrix
        if self._embedder != embedder or held is None or held.dim != dim:
            return self._build(embedder, dim)
        with self._db.read() as session:
            changed = session.execute(
                select(_MEMORIES.c.id, _MEMORIES.c.rev).where(_MEMORIES.c.rev > self._mark).order_by(_MEMORIES.c.rev)
            ).all()
        for _memory_id, rev in changed:
            self._mark = max(self._mark, int(rev))
        look = dict.fromkeys(str(r[0]) for r in changed)
        for memory_id in list(self._unsettled)[:RECHECK_PER_CALL]:
            look[memory_id] = None
        if look:
            self._load(list(look))
        return held

    def _build(self, embedder: str, dim: int) -> RowMatrix:
        self._embedder = embedder
        self._rows_matrix = None  # until this build is done: a failed one is made again on the next query
        self._chunk_ids, self._owner = [], []
        self._rows, self._slot, self._slot_ids, self._free = {}, {}, [], []
        self._entities, self._by_entity, self._unsettled = {}, None, {}
        with self._db.read() as session:
            self._mark = int(session.execute(select(func.max(_MEMORIES.c.rev))).scalar() or 0)
            # The creation times as stored (SQLite: fixed-width ISO text, read in one numpy call).
            memories = session.execute(
                select(_MEMORIES.c.id, _MEMORIES.c.state, _MEMORIES.c.type, type_coerce(_MEMORIES.c.created_at, String))
            ).all()
            # One chunk per memory for most: room for them and a quarter more.
            held = RowMatrix(dim, max(1024, len(memories) + len(memories) // 4), _COLUMNS)
            facts = self._know([str(m[0]) for m in memories], [str(m[1]) for m in memories],
                               [str(m[2]) for m in memories], all_micros([m[3] for m in memories]))  # fmt: skip
            active = {str(m[0]) for m in memories if m[1] == "active"}
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
                self._place(held, batch, facts)
        # Taken as indexed from the text their rows give; an active one without vectors is not yet.
        self._unsettled = dict.fromkeys(sorted(m for m in active if not self._rows.get(m)))
        self._weigh_all(held, active)
        self._rows_matrix = held
        return held

    def _load(self, memory_ids: Sequence[str]) -> None:
        """Read these memories' rows and chunks again (a memory no longer stored leaves the index)."""
        held = self._rows_matrix
        assert held is not None
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
            self._remove(held, memory_id)
            self._unsettled.pop(memory_id, None)
        for memory in memories:
            # Settled: its document is indexed, with this embedder, from the text its row gives.
            digest, embedder = indexed.get(f"{DOC_PREFIX}{memory.id}", ("", None))
            if digest != doc_hash(memory) or embedder != self._embedder:
                self._unsettled[str(memory.id)] = None
        ids = [str(m.id) for m in memories]
        facts = self._know(ids, [str(m.state) for m in memories], [str(m.type) for m in memories],
                           [micros(m.created_at) for m in memories])  # fmt: skip
        self._know_entities({str(m.id): tuple(str(e) for e in m.entities or ()) for m in memories})
        self._place(held, rows, facts)
        active = {str(m.id) for m in memories if m.state == "active" and str(m.id) not in self._unsettled}
        for memory_id in ids:
            self._weigh(held, memory_id, memory_id in active)

    def _know(self, ids: list[str], states: list[str], types: list[str], created: Any) -> dict[str, tuple[int, ...]]:
        """Give these memories a slot (their chunks follow, :meth:`_place`); memory id → (state
        code, type code, creation time, slot) for their rows."""
        for name in {*states, *types}:
            self._codes.setdefault(name, len(self._codes))
        codes = self._codes
        facts: dict[str, tuple[int, ...]] = {}
        for memory_id, state, kind, when in zip(ids, states, types, created, strict=True):
            if self._free:
                slot = self._free.pop()
                self._slot_ids[slot] = memory_id
            else:
                slot = len(self._slot_ids)
                self._slot_ids.append(memory_id)
            self._slot[memory_id] = slot
            self._rows[memory_id] = []
            facts[memory_id] = (codes[state], codes[kind], int(when), slot)
        return facts

    def _place(self, held: RowMatrix, rows: Sequence[Any], facts: dict[str, tuple[int, ...]]) -> None:
        """Add the chunk ``rows`` (chunk id, document id, vector) whose memory :meth:`_know` just
        gave a slot (others: a memory added since, read on the next query); weight 0 until weighed."""
        import numpy as np

        dim = held.dim
        placed = [(r, str(r[1])[len(DOC_PREFIX) :]) for r in rows]
        placed = [(r, m) for r, m in placed if m in facts and len(r[2]) == 4 * dim]
        if not placed:
            return
        vectors = np.frombuffer(b"".join(bytes(r[2]) for r, _m in placed), dtype="<f4").reshape(-1, dim)
        known = np.array([facts[m] for _r, m in placed], dtype=np.int64).reshape(-1, 4)
        start = held.append(vectors, state=known[:, 0], type=known[:, 1], created=known[:, 2], slot=known[:, 3])
        self._chunk_ids += [str(r[0]) for r, _m in placed]
        self._owner += [m for _r, m in placed]
        rows_of = self._rows
        for at, (_r, memory_id) in enumerate(placed, start):
            rows_of[memory_id].append(at)

    def _weigh(self, held: RowMatrix, memory_id: str, seen: bool) -> None:
        """Set the gate's weight of a memory's rows: 1 / ‖Σ its chunk vectors‖ when the gate sees it."""
        import numpy as np

        rows = self._rows.get(memory_id) or []
        if not rows:
            return
        norm = float(np.linalg.norm(held.matrix[rows].sum(axis=0))) if seen else 0.0
        held.columns["weight"][rows] = 1.0 / norm if norm > 0 else 0.0

    def _weigh_all(self, held: RowMatrix, seen: set[str]) -> None:
        """:meth:`_weigh` of every memory at once (a build): a one-chunk memory's weight is its
        row's own inverse norm; the few with several chunks one by one."""
        import numpy as np

        n = len(held)
        if n == 0:
            return
        slot = held.column("slot")
        counts = np.bincount(slot, minlength=len(self._slot_ids))
        norms = np.linalg.norm(held.vectors(), axis=1)
        single = counts[slot] == 1
        eligible = np.zeros(len(self._slot_ids), dtype=bool)
        eligible[[self._slot[m] for m in seen if m in self._slot]] = True
        weight = held.column("weight")
        ok = single & eligible[slot] & (norms > 0)
        weight[ok] = 1.0 / norms[ok]
        for slot_id in np.flatnonzero(counts > 1):
            memory_id = self._slot_ids[int(slot_id)]
            if memory_id is not None:
                self._weigh(held, memory_id, memory_id in seen)

    def _remove(self, held: RowMatrix, memory_id: str) -> None:
        """Drop a memory, its rows (the last rows take their places) and its slot."""
        for entity in self._entities.pop(memory_id, ()):
            members = self._by_entity.get(entity) if self._by_entity is not None else None
            if members is not None:
                members.discard(memory_id)
                if not members:
                    del self._by_entity[entity]  # type: ignore[union-attr]
        slot = self._slot.pop(memory_id, None)
        if slot is not None:
            self._slot_ids[slot] = None
            self._free.append(slot)
        for row in sorted(self._rows.pop(memory_id, ()), reverse=True):
            moved_from = held.remove(row)
            if moved_from is None:
                self._chunk_ids.pop()
                self._owner.pop()
                continue
            moved = self._owner[moved_from]
            self._chunk_ids[row] = self._chunk_ids.pop()
            self._owner[row] = self._owner.pop()
            moved_rows = self._rows[moved]
            moved_rows[moved_rows.index(moved_from)] = row
