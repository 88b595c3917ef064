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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.sql.elements import BindParameter
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.retrieval.vectors import ChunkVector, VectorHit

if TYPE_CHECKING:
    from dokoro_store.retrieval.scope import DocScope

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
        if dimension in TYPED_DIMENSIONS:
            return f"pgvector HNSW index on vector({dimension}) (cosine, ef_search {EF_SEARCH})"
        return (
            f"pgvector exact scan in PostgreSQL: {dimension}-dimension vectors have no typed column "
            f"(HNSW for {', '.join(map(str, TYPED_DIMENSIONS))})"
        )

    def write_in_transaction(self, session: Session, rows: Sequence[ChunkVector]) -> None:
        if not rows:
            return
        by_column: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            by_column.setdefault(column_for(len(row.vector)), []).append(
                {"v": vector_literal(row.vector), "id": row.chunk_id}
            )
        for column, values in by_column.items():
            session.execute(text(f"UPDATE chunks SET {column} = CAST(:v AS vector) WHERE chunk_id = :id"), values)

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        return None

    def clear(self) -> None:
        return None

    def close(self) -> None:
        return None

    def optimise(self, rebuild: bool = False) -> str:
        """PostgreSQL keeps the HNSW index up to date on every write; ``rebuild`` (after a
        re-embed replaced every vector) builds it again in one pass, without the dead entries."""
        dimension = self._stamp_dimension()
        if dimension not in TYPED_DIMENSIONS:
            return "no HNSW index: vectors of this dimension are scanned exactly"
        if not rebuild:
            return f"HNSW index on vector({dimension}) kept up to date by PostgreSQL"
        with self._db.write() as session:
            session.execute(text(f"REINDEX INDEX ix_chunks_v{dimension}_hnsw"))
        return f"rebuilt the HNSW index on vector({dimension})"

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
