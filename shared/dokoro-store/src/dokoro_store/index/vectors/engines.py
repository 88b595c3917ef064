"""The vector engines and the factory that picks one for a store (pgvector, LanceDB, the exact
scan). Beside the engines rather than in :mod:`.vectors`, their protocol: the engines import the
protocol, the factory imports the engines, and nothing imports back.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

from dokoro_store.index.vectors.index import ExactScanIndex, VectorIndex

if TYPE_CHECKING:
    from dokoro_store.db.engine import Database
    from dokoro_store.index.config import RetrievalConfig
    from dokoro_store.paths import StorePaths

__all__ = ["lancedb_installed", "open_vector_index"]


def lancedb_installed() -> bool:
    return find_spec("lancedb") is not None and find_spec("pyarrow") is not None


def open_vector_index(db: Database, paths: StorePaths, config: RetrievalConfig) -> VectorIndex:
    """The engine for this store: pgvector or LanceDB when possible, else the exact scan."""
    if db.dialect == "postgresql":
        from dokoro_store.index.vectors.pgvector import PgVectorIndex, pgvector_column_present

        if config.vector_engine != "exact":
            present, why = pgvector_column_present(db)
            if present:
                return PgVectorIndex(db)
            return ExactScanIndex(db, why)
        return ExactScanIndex(db, "chosen by configuration")
    if config.vector_engine == "exact":
        return ExactScanIndex(db, "chosen by configuration")
    if lancedb_installed():
        from dokoro_store.index.vectors.lance.engine import LanceIndex

        return LanceIndex(db, paths)
    return ExactScanIndex(db, "LanceDB is not installed: pip install 'dokoro-store[lancedb]' for large stores")
