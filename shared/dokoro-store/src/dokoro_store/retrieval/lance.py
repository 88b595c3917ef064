"""LanceDB as the vector engine of the embedded backend (``.dokoro/db/vectors.lance``).

LanceDB holds a copy of the vectors kept in the database, for fast nearest-neighbour search on
large stores. Writes follow each committed index write (under a file lock shared by every process
of the store). The copy is checked before each search — same number of vectors as the database
for this embedder — and rebuilt from the database when it drifted (a crash between the two
writes, a process without LanceDB writing the database). Hits are filtered against the database,
so a stale row can never surface a deleted chunk.

``lancedb`` and ``pyarrow`` are imported on first use, never at server start.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.files import file_lock
from dokoro_store.retrieval.tables import chunks
from dokoro_store.retrieval.vectors import ChunkVector, VectorHit

if TYPE_CHECKING:
    from dokoro_store.paths import StorePaths
    from dokoro_store.retrieval.scope import DocScope

__all__ = ["TABLE", "LanceIndex"]

log = logging.getLogger("dokoro.store")

TABLE = "vectors"
_OPTIMISE_EVERY = 64  # writes between compactions of the LanceDB table


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

    def describe(self) -> str:
        return f"LanceDB (embedded) at {self._dir}"

    # ------------------------------------------------------------------ plumbing
    def _connect(self) -> Any:
        if self._conn is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # import-time deprecations of third-party modules
                import lancedb

            self._dir.mkdir(parents=True, exist_ok=True)
            self._conn = lancedb.connect(str(self._dir))
        return self._conn

    def _table(self) -> Any:
        conn = self._connect()
        if not _exists(conn):
            return None
        return conn.open_table(TABLE)

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
                conn.drop_table(TABLE)
                table = None
        if table is not None and doc_ids:
            for start in range(0, len(doc_ids), 200):
                batch = doc_ids[start : start + 200]
                table.delete(f"doc_id IN ({', '.join(_quote(d) for d in batch)})")
        if rows:
            data = self._arrow(rows)
            if table is None:
                conn.create_table(TABLE, data=data)
            else:
                table.add(data)
        self._writes += 1
        if table is not None and self._writes % _OPTIMISE_EVERY == 0:
            try:
                table.optimize()
            except Exception:  # compaction is housekeeping: never fail an index write for it
                log.warning("dokoro: LanceDB compaction failed", exc_info=True)

    # ------------------------------------------------------------------ protocol
    def write_in_transaction(self, session: Session, rows: Sequence[ChunkVector]) -> None:
        return None

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        with self._lock, file_lock(self._paths.locks_dir, "lance"):
            self._write(doc_ids, rows)

    def clear(self) -> None:
        with self._lock, file_lock(self._paths.locks_dir, "lance"):
            self._checked = None
            conn = self._connect()
            if _exists(conn):
                conn.drop_table(TABLE)

    def _database_count(self, embedder: str) -> int:
        with self._db.read() as session:
            value = session.execute(
                select(func.count())
                .select_from(chunks)
                .where(chunks.c.embedder == embedder, chunks.c.embedding.is_not(None))
            ).scalar()
        return int(value or 0)

    def _rebuild(self, embedder: str) -> None:
        from dokoro_store.retrieval.embedders import from_bytes

        with self._db.read() as session:
            rows = session.execute(
                select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.embedding).where(
                    chunks.c.embedder == embedder, chunks.c.embedding.is_not(None)
                )
            ).all()
        vectors = [ChunkVector(str(r[0]), str(r[1]), int(r[2]), embedder, from_bytes(r[3])) for r in rows]
        conn = self._connect()
        if _exists(conn):
            conn.drop_table(TABLE)
        for start in range(0, len(vectors), 5_000):
            self._write([], vectors[start : start + 5_000])
        log.info("dokoro: rebuilt the LanceDB copy of %d vectors from the database", len(vectors))

    def _in_step(self, embedder: str) -> bool:
        table = self._table()
        lance_count = 0 if table is None else int(table.count_rows(f"embedder = {_quote(embedder)}"))
        total = 0 if table is None else int(table.count_rows())
        return lance_count == total and lance_count == self._database_count(embedder)

    def _ensure_in_step(self, embedder: str) -> None:
        from dokoro_store.retrieval.vectors import current_generation

        with self._db.read() as session:
            generation = current_generation(session)
        if self._checked == (generation, embedder):
            return
        if not self._in_step(embedder):
            with file_lock(self._paths.locks_dir, "lance"):
                if not self._in_step(embedder):
                    self._rebuild(embedder)
        self._checked = (generation, embedder)

    def search(self, vector: Any, embedder: str, k: int, scope: DocScope | None = None) -> list[VectorHit]:
        import numpy as np

        with self._lock:
            self._ensure_in_step(embedder)
            table = self._table()
        if table is None or k <= 0:
            return []
        if table.schema.field("vector").type.list_size != len(vector):
            return []
        query = np.asarray(vector, dtype=np.float32)

        def nearest(n: int, allowed: Sequence[str] | None) -> list[VectorHit]:
            search = table.search(query, vector_column_name="vector").distance_type("cosine")
            if allowed is not None:
                # A LanceDB prefilter: the nearest among the allowed documents, not a filter of the top n.
                search = search.where(f"doc_id IN ({', '.join(_quote(d) for d in allowed)})", prefilter=True)
            found = search.limit(n).select(["id", "doc_id", "_distance"]).to_list()
            return [VectorHit(str(r["id"]), str(r["doc_id"]), 1.0 - float(r["_distance"])) for r in found]

        if scope is None:
            hits = nearest(k, None)
        else:
            from dokoro_store.retrieval.scope import scoped_nearest

            hits = scoped_nearest(self._db, scope, k, nearest, lambda hit: hit.doc_id, int(table.count_rows()))
        return self._existing(hits, embedder)

    def _existing(self, hits: list[VectorHit], embedder: str) -> list[VectorHit]:
        if not hits:
            return hits
        with self._db.read() as session:
            live = set(
                session.execute(
                    select(chunks.c.chunk_id).where(
                        chunks.c.chunk_id.in_([h.chunk_id for h in hits]), chunks.c.embedder == embedder
                    )
                ).scalars()
            )
        return [h for h in hits if h.chunk_id in live]

    def count(self) -> int:
        if not self._dir.exists():
            return 0  # nothing written yet: no need to load LanceDB to say so
        with self._lock:
            table = self._table()
            return 0 if table is None else int(table.count_rows())
