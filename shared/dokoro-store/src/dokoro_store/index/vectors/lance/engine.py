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
of the database's own vectors held in memory (``ExactScanIndex``, caught up with the rows written
since its last look), which also hands the fusion the candidates' vectors without a query.
Past :data:`~.lance_table.ANN_THRESHOLD` vectors the copy gets an ANN index (IVF_SQ,
:mod:`.lance_table`). Measured on the development machine (2 cores, shared; ``bench/scale.py`` and
the notes in ``docs/benchmarks.md``): LanceDB's exact scan took 10 ms at 5k vectors, 32 ms at 10k
and 0.9 s at 100k; IVF_SQ answered in 15–35 ms at 10k–100k and built in 1.7 s at 10k, 9.5 s at
100k, where IVF_PQ took 100 s to build at 20k and HNSW (IVF_HNSW_SQ) 57 s. The table itself is
:mod:`.lance_table`'s; the database side of the copy (its marks and counts) :mod:`.lance_mirror`'s.

``lancedb`` and ``pyarrow`` are imported on first use, never at server start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from dokoro_store.db.engine import Database
from dokoro_store.index.scope import ScopeShares
from dokoro_store.index.vectors.index import ChunkVector, ExactScanIndex, VectorHit
from dokoro_store.index.vectors.lance import mirror as lance_mirror
from dokoro_store.index.vectors.lance import table as lance_table
from dokoro_store.index.vectors.lance.table import TABLE, LanceTable, nearest_in
from dokoro_store.walls.files import file_lock

if TYPE_CHECKING:
    from dokoro_store.index.scope import DocScope
    from dokoro_store.paths import StorePaths

__all__ = ["MIRROR_DELAY", "MIRROR_TAIL", "TABLE", "LanceIndex"]

log = logging.getLogger("dokoro.store")

# Write-behind: seconds after a write before its process copies the new vectors to LanceDB, and
# the number of vectors waiting past which a write or a search copies them at once (the tail is
# scored exactly by every search: 512 × 256 floats is a fraction of a millisecond).
MIRROR_DELAY = 2.0
MIRROR_TAIL = 512
RECHECK_AFTER = 5.0  # seconds between two drift checks of the copy (see _ensure_in_step)
# Vectors below which a query is an exact scan of the database's vectors held in memory (caught up
# with the rows written since its last look), not a LanceDB query. Measured (2 cores, shared):
# LanceDB's per-query overhead is 8-15 ms even on a few hundred vectors, the in-memory scan well
# under 1 ms. Chosen when a write made the next search read the matrix again (~7 µs of CPU per
# vector, 73 ms at 10k); since migration 0030 it reads the written rows only
# (``bench/exact_after_write.py``), so the bound is now the scan's and the memory it holds.
EXACT_IN_MEMORY = 2_000


class LanceIndex:
    engine = "lancedb"

    def __init__(self, db: Database, paths: StorePaths) -> None:
        self._db = db
        self._paths = paths
        self._dir = paths.db_dir / "vectors.lance"
        self._lock = threading.Lock()
        self._table = LanceTable(self._dir)
        # (generation, embedder) last found in step with the database: no need to count again.
        self._checked: tuple[int, str] | None = None
        self._checked_at = 0.0  # time.monotonic() of the last count
        self._step = db.background.step(
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
        self._shares = ScopeShares()  # how long the first list of a scoped search is (index/scope.py)

    def describe(self) -> str:
        where = f"LanceDB (embedded) at {self._dir}"
        waiting = lance_mirror.waiting(self._db)
        behind = f"; {waiting:,} newer vectors scanned exactly until copied" if waiting else ""
        threshold = lance_table.ANN_THRESHOLD
        empty = f"{where}: exact scan (no vectors yet; an IVF_SQ index from {threshold:,} vectors){behind}"
        if not self._dir.exists():
            return empty
        with self._lock:
            line = self._table.describe(where, behind, waiting)
        return empty if line is None else line

    def _file_lock(self) -> Any:
        return file_lock(self._paths.locks_dir, "lance", within=self._paths.root)

    def optimise(self, rebuild: bool = False) -> str:
        """Build or refresh the ANN index now (after a bulk import); ``rebuild`` trains it again."""
        with self._lock, self._file_lock():
            self._mirror()
            return self._table.maintain(rebuild)

    # ------------------------------------------------------------------ protocol
    def write_in_transaction(self, connection: Connection, rows: Sequence[ChunkVector]) -> None:
        return None

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        """The vectors of re-indexed or deleted documents leave the copy now; the new ones
        (``rows``, committed marked) are copied by the mirror step."""
        if doc_ids:
            with self._lock, self._file_lock():
                self._table.write(doc_ids, [])
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
        with self._lock, self._file_lock():
            self._checked = None
            self._regime = None
            self._exact.clear()
            self._table.drop()

    # ------------------------------------------------------------------ write-behind
    def mirror(self) -> int:
        """Copy every vector marked unmirrored to LanceDB now; returns how many were copied."""
        with self._lock, self._file_lock():
            return self._mirror()

    def _mirror(self) -> int:
        """The mirror step (caller holds both locks): append the marked vectors in one batch
        (after deleting any older copy of their documents), then clear the marks of exactly the
        writes copied — a document re-indexed meanwhile keeps its new mark."""
        with self._written_lock:
            self._written = 0
        rows = lance_mirror.marked(self._db)
        if not rows:
            return 0
        vectors = lance_mirror.vectors_of(rows)
        for start in range(0, len(vectors), 5_000):
            batch = vectors[start : start + 5_000]
            self._table.write(sorted({v.doc_id for v in batch}), batch)
        lance_mirror.clear_marks(self._db, rows)
        return len(vectors)

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

    def _rebuild(self, embedder: str) -> None:
        vectors = lance_mirror.mirrored(self._db, embedder)
        self._table.drop()
        for start in range(0, len(vectors), 5_000):
            self._table.write([], vectors[start : start + 5_000])
        log.info("dokoro: rebuilt the LanceDB copy of %d vectors from the database", len(vectors))
        if len(vectors) >= lance_table.ANN_THRESHOLD:
            self._table.maintain()

    def _in_step(self, embedder: str) -> bool:
        # The copy holds one embedder's vectors (a re-embed drops it; the stamp refuses a second
        # embedder), so the row count alone, read from the table's metadata, says whether it drifted.
        table = self._table.open()
        total = 0 if table is None else int(table.count_rows())
        return total == lance_mirror.copied_count(self._db, embedder)

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
        self._table.forget_index()  # another process may have built or rebuilt the index meanwhile
        try:
            in_step = self._in_step(embedder)
        except (OSError, RuntimeError, ValueError):  # the table was dropped by another process
            self._table.forget_handle()
            in_step = False
        if not in_step:
            with self._file_lock():
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
            limit = min(EXACT_IN_MEMORY, lance_table.ANN_THRESHOLD)
            self._regime = (generation, embedder, lance_mirror.fewer_than(self._db, limit, embedder))
        return self._regime[2]

    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Any]] | None:
        """The candidates' vectors from the exact scan's matrix when the last search used it (None:
        read them from the database)."""
        with self._lock:
            regime = self._regime
        if regime is None or regime[1] != embedder or not regime[2]:
            return None
        return self._exact.stored_vectors(doc_ids, embedder)

    def search(self, vector: Any, embedder: str, k: int, scope: DocScope | None = None) -> list[VectorHit]:
        import numpy as np

        from dokoro_store.index.vectors.index import current_generation

        with self._db.read() as session:  # read once for both checks below
            generation = current_generation(session)
        with self._lock:
            exact = self._in_memory(embedder, generation)
        if exact:
            # The same exact scan LanceDB would make, over the database's own rows (never stale).
            return self._exact.search(vector, embedder, k, scope, generation=generation)
        with self._lock:
            self._ensure_in_step(embedder, generation)
            table = self._table.open()
        if k <= 0:
            return []
        tail_ids, tail_docs, tail = lance_mirror.tail(self._db, embedder)
        if len(tail_ids) > MIRROR_TAIL:  # left by other processes (or a killed one): copy them now
            self.mirror()
            with self._lock:
                table = self._table.open()
            tail_ids, tail_docs, tail = lance_mirror.tail(self._db, embedder)
        elif tail_ids:
            self._step.schedule(MIRROR_DELAY)
        if table is not None and self._table.dim_of(table) != len(vector):
            table = None  # vectors of another dimension: none of them answers this query
        if tail is not None and tail.shape[1] != len(vector):
            tail_ids, tail_docs, tail = [], [], None
        if table is None and tail is None:
            return []
        query = np.asarray(vector, dtype=np.float32)
        probes = self._table.probes_for(table) if table is not None else 0
        waiting = set(tail_ids)

        def copied(n: int, allowed: Sequence[str] | None) -> list[VectorHit]:
            if table is None:
                return []
            return nearest_in(table, query, n, probes, allowed)

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
            from dokoro_store.index.scope import scoped_nearest

            def total() -> int:  # counted only when the list must widen (a LanceDB call each time)
                return (int(table.count_rows()) if table is not None else 0) + len(tail_ids)

            hits = scoped_nearest(self._db, scope, k, nearest, lambda hit: hit.doc_id, total, self._shares)
        return lance_mirror.existing(self._db, hits, embedder)

    def count(self) -> int:
        """Vectors the engine answers from: those in the copy and those waiting for it."""
        waiting = lance_mirror.waiting(self._db)
        if not self._dir.exists():
            return waiting  # nothing copied yet: no need to load LanceDB to say so
        with self._lock:
            table = self._table.open()
            return waiting + (0 if table is None else int(table.count_rows()))
