"""The LanceDB table that holds the copy of a store's vectors (``.dokoro/db/vectors.lance``).

:class:`LanceTable` opens, writes, drops and keeps up the table and its ANN index, and runs one
nearest-neighbour query on it; which vectors go in and when is
:class:`~dokoro_store.index.vectors.lance.engine.LanceIndex`'s (the caller holds its locks).

Below :data:`ANN_THRESHOLD` vectors every query is an exact scan. Past it the table gets an ANN
index: IVF with scalar-quantised vectors (``IVF_SQ``, cosine), searched in :data:`NPROBES`
partitions and re-ranked on the full vectors (``refine_factor``), so the order of the hits is the
exact one. Rows written after the index was built are scanned exactly until the next maintenance
(every :data:`OPTIMISE_EVERY` writes to the table, or :meth:`LanceTable.maintain` after a bulk
import or a re-embed) adds them to it; the index is trained again once the table has grown
four-fold since.

``lancedb`` and ``pyarrow`` are imported on first use, never at server start.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from dokoro_store.index.vectors.index import ChunkVector, VectorHit

__all__ = ["ANN_THRESHOLD", "NPROBES", "OPTIMISE_EVERY", "REFINE_FACTOR", "TABLE", "LanceTable", "quote"]

log = logging.getLogger("dokoro.store")

TABLE = "vectors"
OPTIMISE_EVERY = 64  # writes to the table (copied batches, deletes) between compactions and index upkeep
# Vectors from which the table gets an ANN index (below it, an exact scan is as fast).
ANN_THRESHOLD = 10_000
NPROBES = 20  # IVF partitions searched per query (at least; more on a large index)
# Candidates re-ranked on the full vectors: k × this. 1 re-scores the k fetched exactly; at 100k
# (50 needle queries) the top 10/50/100 of 200 equal an exact scan's, as with 5, at ~60% of the cost
# (``docs/benchmarks.md``, "Recall depth"); the legs already ask for twice the depth they keep.
REFINE_FACTOR = 1
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


def _nprobes(index: Any) -> int:
    trained = (
        int(str(index.name).removeprefix(_INDEX_PREFIX) or 0)
        if str(index.name).startswith(_INDEX_PREFIX)
        else _partitions(ANN_THRESHOLD)
    )
    return max(NPROBES, trained // 8)


def quote(value: str) -> str:
    """``value`` as a string literal of a LanceDB filter."""
    return "'" + value.replace("'", "''") + "'"


def _arrow(rows: Sequence[ChunkVector]) -> Any:
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


class LanceTable:
    """The ``vectors`` table under ``directory``: one connection, one open handle."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._conn: Any = None
        self._handle: Any = None  # the open LanceDB table
        self._writes = 0
        self._probes: int | None = None  # partitions to search when the table has an ANN index
        self._dim: int | None = None  # the vector size, read once per index change (a schema read costs ~1 ms)

    def _connect(self) -> Any:
        if self._conn is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # import-time deprecations of third-party modules
                import lancedb

            self.directory.mkdir(parents=True, exist_ok=True)
            # Every read checks for a newer version of the table (other processes write it too),
            # so one open handle serves every query.
            self._conn = lancedb.connect(str(self.directory), read_consistency_interval=timedelta(0))
        return self._conn

    def open(self) -> Any:
        """The open table (None when there is none yet); opened once, reopened after a drop."""
        if self._handle is None:
            try:
                self._handle = self._connect().open_table(TABLE)
            except ValueError:  # "Table 'vectors' was not found"
                return None
        return self._handle

    def forget_index(self) -> None:
        """Look the ANN index up again on the next query (another process may have rebuilt it)."""
        self._probes = None

    def forget_handle(self) -> None:
        """Open the table again on next use (another process dropped it)."""
        self._handle = None

    def drop(self) -> None:
        self._handle = None
        self._probes = None
        conn = self._connect()
        if TABLE in list(conn.list_tables().tables):
            conn.drop_table(TABLE)

    def write(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        """Delete the copies of ``doc_ids``, then append ``rows`` (a table of another vector size is
        dropped first); every :data:`OPTIMISE_EVERY` writes, the table's upkeep."""
        conn = self._connect()
        table = self.open()
        if table is not None and rows:
            dim = table.schema.field("vector").type.list_size
            if dim != len(rows[0].vector):
                self.drop()
                table = None
        if table is not None and doc_ids:
            for start in range(0, len(doc_ids), 200):
                batch = doc_ids[start : start + 200]
                table.delete(f"doc_id IN ({', '.join(quote(d) for d in batch)})")
        if rows:
            data = _arrow(rows)
            if table is None:
                self._handle = conn.create_table(TABLE, data=data)
            else:
                table.add(data)
        self._writes += 1
        if self._writes % OPTIMISE_EVERY == 0:
            try:
                self.maintain()
            except Exception:  # upkeep is housekeeping: never fail an index write for it
                log.warning("dokoro: LanceDB compaction or index upkeep failed", exc_info=True)

    def maintain(self, rebuild: bool = False) -> str:
        """Compact the table and keep its ANN index: build it past the threshold, add newer rows
        to it, train it again once the table has grown four-fold."""
        from lancedb.index import IvfSq

        table = self.open()
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

    def describe(self, where: str, behind: str, waiting: int) -> str | None:
        """The table's line for the engine's label (None: no table yet)."""
        table = self.open()
        if table is None:
            return None
        rows = int(table.count_rows())
        index = _ann_index(table)
        if index is None:
            return f"{where}: exact scan of {rows:,} vectors (an IVF_SQ index from {ANN_THRESHOLD:,}){behind}"
        outside = int(index.num_unindexed_rows or 0)  # copied since the index was last brought up to date
        unindexed = outside + waiting
        return (
            f"{where}: IVF_SQ index ({index.name.removeprefix(_INDEX_PREFIX)} partitions, cosine, "
            f"nprobes {_nprobes(index)}, refine ×{REFINE_FACTOR}) over {rows - outside:,} vectors"
            + (f", {unindexed:,} newer ones scanned exactly" if unindexed else "")
        )

    def dim_of(self, table: Any) -> int:
        """The table's vector size, looked up once per index change (as :meth:`probes_for`)."""
        if self._dim is None or self._probes is None:
            self._dim = int(table.schema.field("vector").type.list_size)
        return self._dim

    def probes_for(self, table: Any) -> int:
        """Partitions to search (0: the table has no ANN index), looked up once per index change."""
        if self._probes is None:
            index = _ann_index(table)
            self._probes = 0 if index is None else _nprobes(index)
        return self._probes


def nearest_in(table: Any, query: Any, n: int, probes: int, allowed: Sequence[str] | None) -> list[VectorHit]:
    """The ``n`` nearest rows of ``table`` to ``query`` (cosine); ``probes``: IVF partitions to
    search (0: no ANN index); ``allowed``: among these documents only (a LanceDB prefilter)."""
    search = table.search(query, vector_column_name="vector").distance_type("cosine")
    if probes:
        search = search.nprobes(probes).refine_factor(REFINE_FACTOR)
    if allowed is not None:
        # A LanceDB prefilter: the nearest among the allowed documents, not a filter of the top n.
        search = search.where(f"doc_id IN ({', '.join(quote(d) for d in allowed)})", prefilter=True)
    # Arrow columns, not a dict per row (a recall reads 400 rows per query).
    found = search.limit(n).select(["id", "doc_id", "_distance"]).to_arrow()
    ids, docs, distances = (found.column(c).to_pylist() for c in ("id", "doc_id", "_distance"))
    return [VectorHit(str(i), str(d), 1.0 - float(x)) for i, d, x in zip(ids, docs, distances, strict=True)]
