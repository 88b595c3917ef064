"""pgvector on PostgreSQL: nearest chunks by cosine distance, computed inside the database.

Migration 0005 adds ``chunks.embedding_pgv vector`` when ``CREATE EXTENSION vector`` succeeded;
migration 0018 adds a typed column per embedder dimension (``embedding_v384``, ``_v512``,
``_v768``, ``_v1024``), each with an HNSW index (cosine). A vector goes to the typed column of its
dimension, so nearest-neighbour queries walk the HNSW graph instead of scanning every row; a
vector of any other dimension goes to the untyped column and is scanned exactly (pgvector cannot
index a column without a fixed dimension). ``describe`` says which one this store uses.

The HNSW search keeps its quality under a filter with pgvector's iterative scans
(``hnsw.iterative_scan``): when the conditions drop candidates, the scan goes on walking the graph
instead of returning fewer than ``k`` rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text
from sqlalchemy.sql.elements import BindParameter
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.index.vectors.index import ChunkVector, VectorHit

if TYPE_CHECKING:
    from dokoro_store.index.scope import DocScope

__all__ = [
    "EF_SEARCH",
    "TYPED_DIMENSIONS",
    "PgVectorIndex",
    "column_for",
    "nearest_sql",
    "pgvector_column_present",
    "vector_literal",
]

# The typed columns of migration 0018 (one HNSW index each).
TYPED_DIMENSIONS = (384, 512, 768, 1024)
# Candidates the HNSW walk keeps (pgvector's default is 40): recall@10 above 0.98 on our stores.
EF_SEARCH = 100


# A bulk write of at least this many vectors, and at least 1/BULK_DROP_SHARE of those already
# held, drops the HNSW index and builds it again at its end (PgVectorIndex.before_bulk_write).
BULK_DROP_MIN = 2_000
BULK_DROP_SHARE = 4
BUILD_MEMORY = "512MB"  # maintenance_work_mem of an HNSW build (100k vectors of 384: ~200 MB)


def hnsw_index_sql(dimension: int) -> str:
    """The HNSW index of a typed column, as migration 0020 creates it."""
    return (
        f"CREATE INDEX IF NOT EXISTS ix_chunks_v{dimension}_hnsw ON chunks "
        f"USING hnsw (embedding_v{dimension} vector_cosine_ops)"
    )


def vector_literal(vector: Any) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def column_for(dimension: int) -> str:
    """The column that holds vectors of ``dimension``: typed and HNSW-indexed when there is one."""
    return f"embedding_v{dimension}" if dimension in TYPED_DIMENSIONS else "embedding_pgv"


def nearest_sql(dimension: int, join: str = "", where: str = "") -> str:
    """The nearest-neighbour query for vectors of ``dimension`` over ``chunks c`` (binds ``q``,
    ``k``, and ``e`` for the untyped column), with an optional ``join`` and extra ``where``.

    On a typed column the query is ordered by distance alone and has no other condition of its
    own, so the planner walks the HNSW index (a second sort key, or the embedder's btree index,
    would keep it off): a typed column holds one embedder's vectors, since the index stamp refuses
    a second one (search checks the stamp before it asks). The untyped column is filtered by
    embedder and scanned exactly.
    """
    column = column_for(dimension)
    if column == "embedding_pgv":
        distance = "c.embedding_pgv <=> CAST(:q AS vector)"
        return (
            f"SELECT c.chunk_id, c.doc_id, 1 - ({distance}) AS score FROM chunks c{join} "
            f"WHERE c.embedder = :e AND c.embedding_pgv IS NOT NULL{where} ORDER BY {distance}, c.chunk_id LIMIT :k"
        )
    distance = f"c.{column} <=> CAST(:q AS vector({dimension}))"
    return (
        f"SELECT c.chunk_id, c.doc_id, 1 - ({distance}) AS score FROM chunks c{join} "
        f"WHERE c.{column} IS NOT NULL{where} ORDER BY {distance} LIMIT :k"
    )


def pgvector_column_present(db: Database) -> tuple[bool, str]:
    with db.engine.connect() as connection:
        installed = connection.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
        column = connection.execute(
            text(
                "SELECT 1 FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = 'chunks' AND column_name = 'embedding_pgv'"
            )
        ).scalar()
    if installed and column:
        return True, ""
    if not installed:
        return False, (
            "pgvector is not enabled in this database (CREATE EXTENSION vector needs a superuser); "
            "vectors use an exact scan"
        )
    return False, "the pgvector column is missing (the extension was enabled after the migration); exact scan"


class PgVectorIndex:
    engine = "pgvector"

    def __init__(self, db: Database) -> None:
        self._db = db
        self._iterative: bool | None = None  # pgvector >= 0.8: iterative index scans
        # The dimension whose HNSW index this process built and no write of it has touched since:
        # a re-embed's closing rebuild would only build the same index a second time.
        self._fresh: int | None = None

    def _iterative_scans(self, session: Session) -> bool:
        if self._iterative is None:
            version = session.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
            parts = tuple(int(p) for p in str(version or "0").split(".")[:2] if p.isdigit())
            self._iterative = parts >= (0, 8)
        return self._iterative

    def _stamp_dimension(self) -> int | None:
        with self._db.read() as session:
            value = session.execute(text("SELECT dimension FROM index_state WHERE id = 1")).scalar()
        return int(value) if value else None

    def describe(self) -> str:
        dimension = self._stamp_dimension()
        if dimension is None:
            return "pgvector (HNSW index per embedder dimension, cosine; no vectors yet)"
        if dimension in TYPED_DIMENSIONS and not self._has_index(dimension):
            return (
                f"pgvector exact scan on vector({dimension}): its HNSW index is missing (a bulk write "
                "in progress or interrupted; the next bulk write or `dokoro reembed` builds it)"
            )
        if dimension in TYPED_DIMENSIONS:
            return f"pgvector HNSW index on vector({dimension}) (cosine, ef_search {EF_SEARCH})"
        return (
            f"pgvector exact scan in PostgreSQL: {dimension}-dimension vectors have no typed column "
            f"(HNSW for {', '.join(map(str, TYPED_DIMENSIONS))})"
        )

    def write_in_transaction(self, connection: Connection, rows: Sequence[ChunkVector]) -> None:
        if not rows:
            return
        by_column: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            by_column.setdefault(column_for(len(row.vector)), []).append(
                {"v": vector_literal(row.vector), "id": row.chunk_id}
            )
        for column, values in by_column.items():
            connection.execute(text(f"UPDATE chunks SET {column} = CAST(:v AS vector) WHERE chunk_id = :id"), values)

    def insert_chunks(
        self, connection: Connection, rows: Sequence[Mapping[str, Any]], vectors: Sequence[ChunkVector]
    ) -> None:
        """Insert chunk rows (the columns of :data:`~dokoro_store.models.index.chunks`) with
        their vectors already in the pgvector column, in one ``COPY`` inside the session's
        transaction: a bulk write's chunks cost one round trip per batch instead of an ``INSERT`` and
        an ``UPDATE`` per chunk (each ``UPDATE`` a second version of the row and its index entries).

        ``COPY`` does not pass the statement hook of :mod:`dokoro_store.db.redaction`: the one text
        column (``header_context``) is redacted here the same way; the ids are the documents' own,
        checked when the documents were written.
        """
        if not rows:
            return
        from dokoro_store.db.redaction import redact_parameter

        by_chunk = {v.chunk_id: v.vector for v in vectors}
        names = list(rows[0])
        groups: dict[tuple[str, ...], list[list[Any]]] = {}
        for row in rows:
            values = [redact_parameter(row[n]) if n == "header_context" and row[n] else row[n] for n in names]
            vector = by_chunk.get(str(row["chunk_id"]))
            if vector is None:
                groups.setdefault((), []).append(values)
            else:  # a batch has one embedder, so one vector column: one COPY
                groups.setdefault((column_for(len(vector)),), []).append([*values, vector_literal(vector)])
        with connection.connection.driver_connection.cursor() as cursor:  # type: ignore[union-attr]
            for extra, values_list in groups.items():
                with cursor.copy(f"COPY chunks ({', '.join([*names, *extra])}) FROM STDIN") as copy:
                    for values in values_list:
                        copy.write_row(values)

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        if doc_ids:  # re-indexed or deleted documents leave dead entries in the index
            self._fresh = None

    def clear(self) -> None:
        self._fresh = None

    def close(self, *, finish: bool = True) -> None:
        return None

    def optimise(self, rebuild: bool = False) -> str:
        """PostgreSQL keeps the HNSW index up to date on every write; ``rebuild`` (after a
        re-embed replaced every vector) builds it again in one pass, without the dead entries.
        An index a bulk write dropped (:meth:`before_bulk_write`), or an interrupted one left
        missing, is built here."""
        dimension = self._stamp_dimension()
        if dimension not in TYPED_DIMENSIONS:
            return "no HNSW index: vectors of this dimension are scanned exactly"
        if not self._has_index(dimension):
            with self._db.write() as session:
                # Two bulk writes ending at once: one builds, the other then finds the index.
                self._db.ops.lock_keys(session, "pgvector-hnsw", [str(dimension)])
                if self._index_in(session, dimension):
                    return f"HNSW index on vector({dimension}) kept up to date by PostgreSQL"
                # The build sorts the graph in memory: far faster when it fits (pgvector's advice).
                session.execute(text(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'"))
                session.execute(text(hnsw_index_sql(dimension)))
            self._fresh = dimension
            return f"built the HNSW index on vector({dimension})"
        if not rebuild:
            return f"HNSW index on vector({dimension}) kept up to date by PostgreSQL"
        if self._fresh == dimension:
            return f"HNSW index on vector({dimension}) already built by this pass"
        with self._db.write() as session:
            session.execute(text(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'"))
            session.execute(text(f"REINDEX INDEX ix_chunks_v{dimension}_hnsw"))
        self._fresh = dimension
        return f"rebuilt the HNSW index on vector({dimension})"

    def _has_index(self, dimension: int) -> bool:
        with self._db.read() as session:
            return self._index_in(session, dimension)

    @staticmethod
    def _index_in(session: Session, dimension: int) -> bool:
        found = session.execute(
            text("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = :name"),
            {"name": f"ix_chunks_v{dimension}_hnsw"},
        ).scalar()
        return found is not None

    def before_bulk_write(self, dimension: int, incoming: int) -> bool:
        """Drop the HNSW index of ``dimension`` before a bulk write of about ``incoming`` vectors
        when building it again afterwards (:meth:`optimise`, which the bulk write calls) costs
        less than inserting each vector into it: an HNSW insert walks the graph (10k vectors took
        29 s here), a build of the whole column is about ten times faster per vector. True when
        dropped. Searches meanwhile scan the column exactly (same answers, slower)."""
        if dimension not in TYPED_DIMENSIONS or incoming < BULK_DROP_MIN:
            return False
        with self._db.write() as session:
            self._db.ops.lock_keys(session, "pgvector-hnsw", [str(dimension)])
            held = session.execute(text("SELECT count(*) FROM chunks WHERE embedder IS NOT NULL")).scalar()
            if incoming * BULK_DROP_SHARE < int(held or 0):
                return False
            session.execute(text(f"DROP INDEX IF EXISTS ix_chunks_v{dimension}_hnsw"))
        return True

    def search(self, vector: Any, embedder: str, k: int, scope: DocScope | None = None) -> list[VectorHit]:
        typed = column_for(len(vector)) != "embedding_pgv"
        join, where = "", ""
        binds: list[BindParameter[object]] = []
        if scope is not None:
            # The scope is a condition of the nearest-neighbour query itself (the HNSW walk goes on
            # past the documents it excludes: iterative scans).
            condition, binds = scope.sql("d", "postgresql")
            join, where = " JOIN docs d ON d.id = c.doc_id", f" AND {condition}"
        with self._db.read() as session:
            if typed:
                session.execute(text(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, k)}"))
                if self._iterative_scans(session):
                    session.execute(text("SET LOCAL hnsw.iterative_scan = strict_order"))
            rows = session.execute(
                text(nearest_sql(len(vector), join, where)).bindparams(*binds),
                {"q": vector_literal(vector), "e": embedder, "k": k},
            ).all()
        return [VectorHit(str(r[0]), str(r[1]), float(r[2])) for r in rows]

    def count(self) -> int:
        # The vector columns are written in the transaction that stamps the chunk with its embedder
        # (:meth:`write_in_transaction`), so the stamped chunks are the vectors: counted on the index
        # of ``chunks.embedder`` instead of reading every chunk's vector columns.
        with self._db.read() as session:
            value = session.execute(text("SELECT count(*) FROM chunks WHERE embedder IS NOT NULL")).scalar()
        return int(value or 0)
