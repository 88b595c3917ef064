"""pgvector on PostgreSQL: nearest chunks by cosine distance, computed inside the database.

Migration 0005 adds ``chunks.embedding_pgv vector`` when ``CREATE EXTENSION vector`` succeeded. The
column has no fixed dimension (vectors of one embedder share one; the search filters by
embedder first), so there is no ANN index: the scan runs in PostgreSQL, next to the data.
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

__all__ = ["PgVectorIndex", "pgvector_column_present", "vector_literal"]


def vector_literal(vector: Any) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


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

    def describe(self) -> str:
        return "pgvector (cosine distance computed in PostgreSQL)"

    def write_in_transaction(self, session: Session, rows: Sequence[ChunkVector]) -> None:
        if not rows:
            return
        session.execute(
            text("UPDATE chunks SET embedding_pgv = CAST(:v AS vector) WHERE chunk_id = :id"),
            [{"v": vector_literal(row.vector), "id": row.chunk_id} for row in rows],
        )

    def after_commit(self, doc_ids: Sequence[str], rows: Sequence[ChunkVector]) -> None:
        return None

    def clear(self) -> None:
        return None

    def search(self, vector: Any, embedder: str, k: int, scope: DocScope | None = None) -> list[VectorHit]:
        literal = vector_literal(vector)
        join, where = "", ""
        binds: list[BindParameter[object]] = []
        if scope is not None:
            # The scope is a condition of the nearest-neighbour query itself.
            condition, binds = scope.sql("d", "postgresql")
            join, where = " JOIN docs d ON d.id = c.doc_id", f" AND {condition}"
        with self._db.read() as session:
            rows = session.execute(
                text(
                    "SELECT c.chunk_id, c.doc_id, 1 - (c.embedding_pgv <=> CAST(:q AS vector)) AS score "
                    f"FROM chunks c{join} WHERE c.embedder = :e AND c.embedding_pgv IS NOT NULL{where} "
                    "ORDER BY c.embedding_pgv <=> CAST(:q AS vector), c.chunk_id LIMIT :k"
                ).bindparams(*binds),
                {"q": literal, "e": embedder, "k": k},
            ).all()
        return [VectorHit(str(r[0]), str(r[1]), float(r[2])) for r in rows]

    def count(self) -> int:
        with self._db.read() as session:
            value = session.execute(text("SELECT count(*) FROM chunks WHERE embedding_pgv IS NOT NULL")).scalar()
        return int(value or 0)
