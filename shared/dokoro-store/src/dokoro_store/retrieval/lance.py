"""LanceDB as the vector engine of the embedded backend (``.dokoro/db/vectors.lance``).

LanceDB holds a copy of the vectors kept in the database, for fast nearest-neighbour search on
large stores. The copy is written behind: an index write commits its vectors to the database
only, each marked ``chunks.unmirrored`` with the token of its write (migration 0022), and a mirror
step appends the marked vectors to LanceDB in one batch and clears their mark — on a background
thread of the writing process :data:`MIRROR_DELAY` seconds after a write, at once when more than
:data:`MIRROR_TAIL` are waiting, and when the store closes. A one-row ``table.add`` per write made a
LanceDB fragment and manifest per write under the file lock (16 ms of each remember, and every
query slowed by the fragments); a batch makes one. A process killed before its mirror leaves its
vectors marked in the database, and the next process that searches copies them.

Searches stay complete and read-your-writes: LanceDB's hits leave out the marked chunks (a stale
copy of a re-indexed chunk may share their id) and the marked tail, small by construction, is
scored exactly in numpy from the vectors in the database, then merged with them. The copy is
checked before each search — as many vectors as the database holds *mirrored* for this embedder,
so a lagging copy is never taken for drift — and rebuilt from the database when it drifted
(a process without LanceDB writing the database). Hits are filtered against the database, so a
stale row can never surface a deleted chunk. Vectors of a re-indexed or deleted document leave
the copy at once (a delete, after the commit), which keeps the two counts equal.

Below :data:`EXACT_IN_MEMORY` vectors a query does not reach LanceDB at all: it is an exact scan
of the database's own vectors held in memory (``ExactScanIndex``, read again when the index
generation moves), which also hands the fusion the candidates' vectors without a query.
Below :data:`ANN_THRESHOLD` vectors every query is an exact scan. Past it the table gets an ANN
index: IVF with scalar-quantised vectors (``IVF_SQ``, cosine), searched in :data:`NPROBES`
partitions and re-ranked on the full vectors (``refine_factor``), so the order of the hits is the
exact one. Measured on the development machine (2 cores, shared; ``bench/scale.py`` and the
notes in ``docs/benchmarks.md``): LanceDB's exact scan took 10 ms at 5k vectors, 32 ms at 10k and
0.9 s at 100k; IVF_SQ answered in 15–35 ms at 10k–100k and built in 1.7 s at 10k, 9.5 s at 100k,
where IVF_PQ took 100 s to build at 20k and HNSW (IVF_HNSW_SQ) 57 s. Rows written after the index
was built are scanned exactly until the next maintenance (every :data:`_OPTIMISE_EVERY` writes to
the table, or :meth:`LanceIndex.optimise` after a bulk import or a re-embed) adds them to it; the index is
trained again once the table has grown four-fold since.

``lancedb`` and ``pyarrow`` are imported on first use, never at server start.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select, update
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.files import file_lock
from dokoro_store.retrieval.tables import chunks, stamped_with
from dokoro_store.retrieval.vectors import ChunkVector, ExactScanIndex, VectorHit
from dokoro_store.write_behind import DelayedStep

if TYPE_CHECKING:
    from dokoro_store.paths import StorePaths
    from dokoro_store.retrieval.scope import DocScope

__all__ = ["MIRROR_DELAY", "MIRROR_TAIL", "TABLE", "LanceIndex"]

log = logging.getLogger("dokoro.store")

TABLE = "vectors"
_OPTIMISE_EVERY = 64  # writes to the table (copied batches, deletes) between compactions and index upkeep
# Vectors from which the table gets an ANN index (below it, an exact scan is as fast).
ANN_THRESHOLD = 10_000
NPROBES = 20  # IVF partitions searched per query (at least; more on a large index)
# Candidates re-ranked on the full vectors: k × this. 1 re-scores the k fetched exactly; at 100k
# (50 needle queries) the top 10/50/100 of 200 equal an exact scan's, as with 5, at ~60% of the cost
# (``docs/benchmarks.md``, "Recall depth"); the legs already ask for twice the depth they keep.
REFINE_FACTOR = 1
# Write-behind: seconds after a write before its process copies the new vectors to LanceDB, and
# the number of vectors waiting past which a write or a search copies them at once (the tail is
# scored exactly by every search: 512 × 256 floats is a fraction of a millisecond).
MIRROR_DELAY = 2.0
MIRROR_TAIL = 512
RECHECK_AFTER = 5.0  # seconds between two drift checks of the copy (see _ensure_in_step)
# Vectors below which a query is an exact scan of the database's vectors held in memory (read again
# whenever the index generation moves), not a LanceDB query. Measured (2 cores, shared): LanceDB's
# per-query overhead is 8-15 ms even on a few hundred vectors, the in-memory scan well under 1 ms;
# reading the matrix again after a write costs ~7 µs of CPU per vector (73 ms at 10k), so past a
# few thousand vectors a store that writes between its reads would pay more than it saves.
EXACT_IN_MEMORY = 2_000
_INDEX_PREFIX = "vector_ivf_sq_p"  # index name: prefix + the number of partitions it was trained with


def _partitions(rows: int) -> int:
    """IVF partitions for a table of ``rows`` vectors (about √rows / 2: a few hundred rows each)."""
    return max(8, int(rows**0.5) // 2)


def _ann_index(table: Any) -> Any:
    """The table's vector index (None when it has none)."""
    for index in table.list_indices():
        if "vector" in list(index.columns):
            return index
    return None


def _exists(conn: Any) -> bool:
    return TABLE in list(conn.list_tables().tables)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class LanceIndex:
    engine = "lancedb"

    def __init__(self, db: Database, paths: StorePaths) -> None:
        self._db = db
        self._paths = paths
        self._dir = paths.db_dir / "vectors.lance"
        self._lock = threading.Lock()
        self._conn: Any = None
        self._writes = 0
        # (generation, embedder) last found in step with the database: no need to count again.
        self._checked: tuple[int, str] | None = None
        self._checked_at = 0.0  # time.monotonic() of the last count
        self._probes: int | None = None  # partitions to search when the table has an ANN index
        self._dim: int | None = None  # the vector size, read once per index change (a schema read costs ~1 ms)
        self._handle: Any = None  # the open LanceDB table
        self._step = DelayedStep(
            self.mirror,
            name="dokoro-lance-mirror",
            failure="dokoro: copying new vectors to LanceDB failed; the next step retries",
        )
        self._written_lock = threading.Lock()
        self._written = 0  # vectors this process wrote since its last mirror step
        # Below :data:`EXACT_IN_MEMORY` vectors a query is an exact scan of the database's vectors
        # held in memory (kept per index generation): LanceDB's per-query overhead would be most of
        # such a search. (generation, embedder, in memory?) last seen.
        self._exact = ExactScanIndex(db)
        self._regime: tuple[int, str, bool] | None = None

    def describe(self) -> str:
        where = f"LanceDB (embedded) at {self._dir}"
        waiting = self._waiting()
        behind = f"; {waiting:,} newer vectors scanned exactly until copied" if waiting else ""
        empty = f"{where}: exact scan (no vectors yet; an IVF_SQ index from {ANN_THRESHOLD:,} vectors){behind}"
        if not self._dir.exists():
            return empty
        with self._lock:
            table = self._table()
            if table is None:
                return empty
            rows = int(table.count_rows())
            index = _ann_index(table)
        if index is None:
            return f"{where}: exact scan of {rows:,} vectors (an IVF_SQ index from {ANN_THRESHOLD:,}){behind}"
        outside = int(index.num_unindexed_rows or 0)  # copied since the index was last brought up to date
        unindexed = outside + waiting
        return (
            f"{where}: IVF_SQ index ({index.name.removeprefix(_INDEX_PREFIX)} partitions, cosine, "
            f"nprobes {self._nprobes(index)}, refine ×{REFINE_FACTOR}) over {rows - outside:,} vectors"
            + (f", {unindexed:,} newer ones scanned exactly" if unindexed else "")
        )

    def _waiting(self) -> int:
        """Vectors marked as not yet copied (every embedder)."""
        with self._db.read() as session:
            value = session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None))
            ).scalar()
        return int(value or 0)

    @staticmethod
    def _nprobes(index: Any) -> int:
        trained = (
            int(str(index.name).removeprefix(_INDEX_PREFIX) or 0)
            if str(index.name).startswith(_INDEX_PREFIX)
            else _partitions(ANN_THRESHOLD)
        )
        return max(NPROBES, trained // 8)

    # ------------------------------------------------------------------ plumbing
    def _connect(self) -> Any:
        if self._conn is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # import-time deprecations of third-party modules
                import lancedb

            self._dir.mkdir(parents=True, exist_ok=True)
            # Every read checks for a newer version of the table (other processes write it too),
            # so one open handle serves every query.
            self._conn = lancedb.connect(str(self._dir), read_consistency_interval=timedelta(0))
        return self._conn

    def _table(self) -> Any:
        """The open table (None when there is none yet); opened once, reopened after a drop."""
        if self._handle is None:
            try:
                self._handle = self._connect().open_table(TABLE)
            except ValueError:  # "Table 'vectors' was not found"
                return None
        return self._handle

    def _drop(self) -> None:
        self._handle = None
        self._probes = None
        conn = self._connect()
        if _exists(conn):
            conn.drop_table(TABLE)

    def _arrow(self, rows: Sequence[ChunkVector]) -> Any:
        import numpy as np
        import pyarrow as pa  # type: ignore[import-untyped]

        dim = len(rows[0].vector)
        flat = np.concatenate([np.asarray(r.vector, dtype=np.float32) for r in rows])
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), dim)
        return pa.table(
            {
                "id": pa.array([r.chunk_id for r in rows], type=pa.string()),
                "doc_id": pa.array([r.doc_id for r in rows], type=pa.string()),
                "chunk_index": pa.array([r.chunk_index for r in rows], type=pa.int32()),
                "embedder": pa.array([r.embedder for r in rows], type=pa.string()),
                "vector": vectors,
            }
        )

    def _write(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        conn = self._connect()
        table = self._table()
        if table is not None and rows:
            dim = table.schema.field("vector").type.list_size
            if dim != len(rows[0].vector):
                self._drop()
                table = None
        if table is not None and doc_ids:
            for start in range(0, len(doc_ids), 200):
                batch = doc_ids[start : start + 200]
                table.delete(f"doc_id IN ({', '.join(_quote(d) for d in batch)})")
        if rows:
            data = self._arrow(rows)
            if table is None:
                self._handle = conn.create_table(TABLE, data=data)
            else:
                table.add(data)
        self._writes += 1
        if self._writes % _OPTIMISE_EVERY == 0:
            try:
                self._maintain()
            except Exception:  # upkeep is housekeeping: never fail an index write for it
                log.warning("dokoro: LanceDB compaction or index upkeep failed", exc_info=True)

    def _maintain(self, rebuild: bool = False) -> str:
        """Compact the table and keep its ANN index: build it past the threshold, add newer rows
        to it, train it again once the table has grown four-fold (caller holds the locks)."""
        from lancedb.index import IvfSq

        table = self._table()
        if table is None:
            return "no vectors"
        rows = int(table.count_rows())
        index = _ann_index(table)
        if rows < ANN_THRESHOLD:
            table.optimize()
            return f"exact scan of {rows:,} vectors (an ANN index from {ANN_THRESHOLD:,})"
        wanted = _partitions(rows)
        trained = int(str(index.name).removeprefix(_INDEX_PREFIX) or 0) if index is not None else 0
        # ``rebuild`` trains again unless the index was just trained for this size.
        if index is not None and wanted < 2 * trained and not (rebuild and trained != wanted):
            table.optimize()  # compaction, and the rows written since join the index
            self._probes = None
            return f"IVF_SQ index ({trained} partitions) brought up to date over {rows:,} vectors"
        table.optimize()
        if index is not None:
            table.drop_index(index.name)
        table.create_index(
            "vector",
            config=IvfSq(distance_type="cosine", num_partitions=wanted, max_iterations=10, sample_rate=64),
            name=f"{_INDEX_PREFIX}{wanted}",
        )
        self._probes = None
        log.info("dokoro: built the LanceDB IVF_SQ index (%d partitions) over %d vectors", wanted, rows)
        return f"built an IVF_SQ index ({wanted} partitions) over {rows:,} vectors"

    def optimise(self, rebuild: bool = False) -> str:
        """Build or refresh the ANN index now (after a bulk import); ``rebuild`` trains it again."""
        with self._lock, file_lock(self._paths.locks_dir, "lance", within=self._paths.root):
            self._mirror()
            return self._maintain(rebuild)

    # ------------------------------------------------------------------ protocol
    def write_in_transaction(self, session: Session, rows: Sequence[ChunkVector]) -> None:
        return None

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        """The vectors of re-indexed or deleted documents leave the copy now; the new ones
        (``rows``, committed marked) are copied by the mirror step."""
        if doc_ids:
            with self._lock, file_lock(self._paths.locks_dir, "lance", within=self._paths.root):
                self._write(doc_ids, [])
        if not rows:
            return
        with self._written_lock:
            self._written += len(rows)
            due = self._written > MIRROR_TAIL
        if due:
            self.mirror()
        else:
            self._step.schedule(MIRROR_DELAY)

    def clear(self) -> None:
        with self._lock, file_lock(self._paths.locks_dir, "lance", within=self._paths.root):
            self._checked = None
            self._regime = None
            self._exact.clear()
            self._drop()

    # ------------------------------------------------------------------ write-behind
    def mirror(self) -> int:
        """Copy every vector marked unmirrored to LanceDB now; returns how many were copied."""
        with self._lock, file_lock(self._paths.locks_dir, "lance", within=self._paths.root):
            return self._mirror()

    def _mirror(self) -> int:
        """The mirror step (caller holds both locks): append the marked vectors in one batch
        (after deleting any older copy of their documents), then clear the marks of exactly the
        writes copied — a document re-indexed meanwhile keeps its new mark."""
        from dokoro_store.retrieval.embedders import from_bytes

        with self._written_lock:
            self._written = 0
        with self._db.read() as session:
            rows = session.execute(
                select(
                    chunks.c.chunk_id,
                    chunks.c.doc_id,
                    chunks.c.chunk_index,
                    chunks.c.embedder,
                    chunks.c.embedding,
                    chunks.c.unmirrored,
                ).where(chunks.c.unmirrored.is_not(None))
            ).all()
        if not rows:
            return 0
        vectors = [
            ChunkVector(str(r[0]), str(r[1]), int(r[2]), str(r[3]), from_bytes(r[4]))
            for r in rows
            if r[3] is not None and r[4] is not None
        ]
        for start in range(0, len(vectors), 5_000):
            batch = vectors[start : start + 5_000]
            self._write(sorted({v.doc_id for v in batch}), batch)
        with self._db.write() as session:
            # One statement run for every copied chunk (executemany): each write has its own token.
            session.connection().execute(
                update(chunks)
                .where(chunks.c.chunk_id == bindparam("copied_chunk"), chunks.c.unmirrored == bindparam("copied_token"))
                .values(unmirrored=None),
                [{"copied_chunk": str(r[0]), "copied_token": int(r[5])} for r in rows],
            )
        return len(vectors)

    def _tail(self, embedder: str) -> tuple[list[str], list[str], Any]:
        """The vectors of ``embedder`` not yet copied: chunk ids, document ids and their matrix."""
        import numpy as np

        with self._db.read() as session:
            rows = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding).where(
                    chunks.c.unmirrored.is_not(None), stamped_with(embedder), chunks.c.embedding.is_not(None)
                )
            ).all()
        if not rows:
            return [], [], None
        matrix = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<f4").reshape(len(rows), -1)
        return [str(r[0]) for r in rows], [str(r[1]) for r in rows], matrix

    def close(self, *, finish: bool = True) -> None:
        """Stop the background step and (``finish``) copy what is still waiting; unfinished, the
        marks stay in the database and the next search or process copies them."""
        self._step.close(wait=finish)
        if not finish:
            return
        try:
            self.mirror()
        except (OSError, RuntimeError, ValueError):
            log.warning("dokoro: copying new vectors to LanceDB at close failed; the next process does", exc_info=True)

    def _database_count(self, embedder: str) -> int:
        """Vectors of ``embedder`` the copy should hold: the stamped chunks less the marked ones."""
        # A chunk is stamped with an embedder only when it has a vector: counting the stamp alone
        # reads the index on ``chunks.embedder``, not the rows and their vectors; the marked ones
        # are counted on their partial index.
        with self._db.read() as session:
            stamped = session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.embedder == embedder)
            ).scalar()
            waiting = session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None), stamped_with(embedder))
            ).scalar()
        return int(stamped or 0) - int(waiting or 0)

    def _rebuild(self, embedder: str) -> None:
        from dokoro_store.retrieval.embedders import from_bytes

        with self._db.read() as session:
            rows = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.embedding).where(
                    chunks.c.embedder == embedder,
                    chunks.c.embedding.is_not(None),
                    chunks.c.unmirrored.is_(None),  # the marked ones are the mirror step's
                )
            ).all()
        vectors = [ChunkVector(str(r[0]), str(r[1]), int(r[2]), embedder, from_bytes(r[3])) for r in rows]
        self._drop()
        for start in range(0, len(vectors), 5_000):
            self._write([], vectors[start : start + 5_000])
        log.info("dokoro: rebuilt the LanceDB copy of %d vectors from the database", len(vectors))
        if len(vectors) >= ANN_THRESHOLD:
            self._maintain()

    def _in_step(self, embedder: str) -> bool:
        # The copy holds one embedder's vectors (a re-embed drops it; the stamp refuses a second
        # embedder), so the row count alone, read from the table's metadata, says whether it drifted.
        table = self._table()
        total = 0 if table is None else int(table.count_rows())
        return total == self._database_count(embedder)

    def _ensure_in_step(self, embedder: str, generation: int) -> None:
        """``generation``: the index generation, read by the caller."""
        checked = self._checked
        # Every index write on this backend marks its vectors, so the copy cannot lag unseen; it
        # can only drift when a process without LanceDB deletes vectors. Look for that when the
        # index changed, at most every RECHECK_AFTER seconds (counting reads an index of every
        # chunk: 2.5 ms at 20k, each write would pay it).
        if (
            checked is not None
            and checked[1] == embedder
            and (checked[0] == generation or time.monotonic() - self._checked_at < RECHECK_AFTER)
        ):
            return
        self._probes = None  # another process may have built or rebuilt the index meanwhile
        try:
            in_step = self._in_step(embedder)
        except (OSError, RuntimeError, ValueError):  # the table was dropped by another process
            self._handle = None
            in_step = False
        if not in_step:
            with file_lock(self._paths.locks_dir, "lance", within=self._paths.root):
                # A process killed between its copy and clearing the marks: copying again settles it.
                if not self._in_step(embedder) and (not self._mirror() or not self._in_step(embedder)):
                    self._rebuild(embedder)
        self._checked = (generation, embedder)
        self._checked_at = time.monotonic()

    def _in_memory(self, embedder: str, generation: int) -> bool:
        """Whether the database holds fewer than :data:`EXACT_IN_MEMORY` vectors of ``embedder`` at
        index ``generation`` (the count read once per generation, which every index write moves, in
        any process)."""
        if self._regime is None or self._regime[:2] != (generation, embedder):
            self._regime = (generation, embedder, self._fewer_than(min(EXACT_IN_MEMORY, ANN_THRESHOLD), embedder))
        return self._regime[2]

    def _fewer_than(self, limit: int, embedder: str) -> bool:
        """Whether the database holds fewer than ``limit`` vectors of ``embedder`` (copied or not):
        a count that stops at the limit, so a large store pays the same as a small one."""
        with self._db.read() as session:
            few = select(chunks.c.chunk_id).where(chunks.c.embedder == embedder).limit(limit).subquery()
            found = session.execute(select(func.count()).select_from(few)).scalar()
        return int(found or 0) < limit

    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Any]] | None:
        """The candidates' vectors from the exact scan's matrix when the last search used it (None:
        read them from the database)."""
        with self._lock:
            regime = self._regime
        if regime is None or regime[1] != embedder or not regime[2]:
            return None
        return self._exact.stored_vectors(doc_ids, embedder)

    def search(self, vector: Any, embedder: str, k: int, scope: DocScope | None = None) -> list[VectorHit]:  # noqa: C901 - the read-once checks (generation, drift, unmirrored rows) share one session and one answer
        import numpy as np

        from dokoro_store.retrieval.vectors import current_generation

        with self._db.read() as session:  # read once for both checks below
            generation = current_generation(session)
        with self._lock:
            exact = self._in_memory(embedder, generation)
        if exact:
            # The same exact scan LanceDB would make, over the database's own rows (never stale).
            return self._exact.search(vector, embedder, k, scope, generation=generation)
        with self._lock:
            self._ensure_in_step(embedder, generation)
            table = self._table()
        if k <= 0:
            return []
        tail_ids, tail_docs, tail = self._tail(embedder)
        if len(tail_ids) > MIRROR_TAIL:  # left by other processes (or a killed one): copy them now
            self.mirror()
            with self._lock:
                table = self._table()
            tail_ids, tail_docs, tail = self._tail(embedder)
        elif tail_ids:
            self._step.schedule(MIRROR_DELAY)
        if table is not None and self._dim_of(table) != len(vector):
            table = None  # vectors of another dimension: none of them answers this query
        if tail is not None and tail.shape[1] != len(vector):
            tail_ids, tail_docs, tail = [], [], None
        if table is None and tail is None:
            return []
        query = np.asarray(vector, dtype=np.float32)
        probes = self._probes_for(table) if table is not None else 0
        waiting = set(tail_ids)

        def copied(n: int, allowed: Sequence[str] | None) -> list[VectorHit]:
            if table is None:
                return []
            search = table.search(query, vector_column_name="vector").distance_type("cosine")
            if probes:
                search = search.nprobes(probes).refine_factor(REFINE_FACTOR)
            if allowed is not None:
                # A LanceDB prefilter: the nearest among the allowed documents, not a filter of the top n.
                search = search.where(f"doc_id IN ({', '.join(_quote(d) for d in allowed)})", prefilter=True)
            # Arrow columns, not a dict per row (a recall reads 400 rows per query).
            found = search.limit(n).select(["id", "doc_id", "_distance"]).to_arrow()
            ids, docs, distances = (found.column(c).to_pylist() for c in ("id", "doc_id", "_distance"))
            return [VectorHit(str(i), str(d), 1.0 - float(x)) for i, d, x in zip(ids, docs, distances, strict=True)]

        def nearest(n: int, allowed: Sequence[str] | None) -> list[VectorHit]:
            if tail is None:
                return copied(n, allowed)
            # A marked chunk's id may also name a stale copy in LanceDB: ask for as many more.
            hits = [h for h in copied(n + len(tail_ids), allowed) if h.chunk_id not in waiting]
            rows = range(len(tail_ids))
            if allowed is not None:
                wanted = set(allowed)
                rows = [i for i in rows if tail_docs[i] in wanted]  # type: ignore[assignment]
            scores = tail[list(rows)] @ query
            hits += [VectorHit(tail_ids[i], tail_docs[i], float(x)) for i, x in zip(rows, scores, strict=True)]
            hits.sort(key=lambda h: -h.score)
            return hits[:n]

        if scope is None:
            hits = nearest(k, None)
        else:
            from dokoro_store.retrieval.scope import scoped_nearest

            def total() -> int:  # counted only when the list must widen (a LanceDB call each time)
                return (int(table.count_rows()) if table is not None else 0) + len(tail_ids)

            hits = scoped_nearest(self._db, scope, k, nearest, lambda hit: hit.doc_id, total)
        return self._existing(hits, embedder)

    def _dim_of(self, table: Any) -> int:
        """The table's vector size, looked up once per index change (as :meth:`_probes_for`)."""
        if self._dim is None or self._probes is None:
            self._dim = int(table.schema.field("vector").type.list_size)
        return self._dim

    def _probes_for(self, table: Any) -> int:
        """Partitions to search (0: the table has no ANN index), looked up once per index change."""
        if self._probes is None:
            index = _ann_index(table)
            self._probes = 0 if index is None else self._nprobes(index)
        return self._probes

    def _existing(self, hits: list[VectorHit], embedder: str) -> list[VectorHit]:
        if not hits:
            return hits
        from sqlalchemy import text

        from dokoro_store.retrieval.scope import among

        member, value = among("chunk_id", [h.chunk_id for h in hits], self._db.dialect, "ids")
        with self._db.read() as session:
            # ``coalesce`` keeps the database off the index on ``embedder`` (see ``stamped_with``).
            live = set(
                session.execute(
                    text(f"SELECT chunk_id FROM chunks WHERE {member} AND coalesce(embedder, '') = :embedder"),
                    {"ids": value, "embedder": embedder},
                ).scalars()
            )
        return [h for h in hits if h.chunk_id in live]

    def count(self) -> int:
        """Vectors the engine answers from: those in the copy and those waiting for it."""
        waiting = self._waiting()
        if not self._dir.exists():
            return waiting  # nothing copied yet: no need to load LanceDB to say so
        with self._lock:
            table = self._table()
            return waiting + (0 if table is None else int(table.count_rows()))
