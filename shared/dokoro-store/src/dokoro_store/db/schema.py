"""The schema the code expects, for comparison with the one the migrations build.

The code declares its tables in two places: the memory itself on ``SQLModel.metadata``
(``dokoro_store.models``, what backups carry) and the derived search index on
``INDEX_METADATA`` (``dokoro_store.models.index``). :func:`expected_metadata` joins them into
one :class:`~sqlalchemy.MetaData`, the ``target_metadata`` of the Alembic environment, and
:func:`schema_drift` runs Alembic's autogenerate comparison of it against a migrated database:
an empty list means the migrations and the code agree.

A few objects are created by raw SQL in migration ``0005`` and have no SQLAlchemy declaration
on purpose; :func:`include_name` leaves them out of the comparison (each with its reason).

Run the comparison on both backends: each sees something the other cannot. SQLite reflects its
unnamed UNIQUE constraints without a name, so Alembic notices one the code adds but not one the
code drops; PostgreSQL names them (``docs_filepath_key``) and notices both.
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, DefaultClause, ForeignKeyConstraint, MetaData
from sqlalchemy.exc import SAWarning

if TYPE_CHECKING:
    from alembic.runtime.environment import NameFilterParentNames, NameFilterType

__all__ = ["COMPARE_OPTIONS", "describe_drift", "expected_metadata", "include_name", "schema_drift"]

# Columns, types, nullability, indexes, unique constraints, foreign keys and server defaults.
COMPARE_OPTIONS: dict[str, Any] = {"compare_type": True, "compare_server_default": True}

# SQLite: the FTS5 virtual tables of 0005 (docs_fts, docs_trgm) and the shadow tables SQLite
# creates for each (_data, _idx, _docsize, _config). Virtual tables cannot be declared in
# SQLAlchemy; search reaches them by raw SQL (index/fulltext/index.py).
# 0020 adds summaries_fts (session summaries, for dokoro_session_recall) the same way.
_FTS5_TABLE = re.compile(r"^(docs_(fts|trgm)|summaries_fts)(_(data|idx|docsize|config|content))?$")

# PostgreSQL, created by raw SQL in 0005 and read by raw SQL only:
_RAW_COLUMNS = {
    # a generated tsvector column (GENERATED ALWAYS AS ... STORED), PostgreSQL-only full text;
    ("docs", "fts"),
    # a pgvector column, added only when CREATE EXTENSION vector succeeded (index/vectors/pgvector.py).
    ("chunks", "embedding_pgv"),
    # typed pgvector columns with an HNSW index each, one per embedder dimension (0018, same condition).
    *{("chunks", f"embedding_v{dim}") for dim in (384, 512, 768, 1024)},
}
_RAW_INDEXES = {
    "ix_docs_fts",  # GIN over the tsvector column above
    "ix_docs_trgm",  # GIN expression index (pg_trgm), only when the extension could be enabled
    "ix_summaries_fts",  # GIN expression index over to_tsvector('english', summary) (0020)
    # HNSW indexes (pgvector) on the typed vector columns above (0018)
    *{f"ix_chunks_v{dim}_hnsw" for dim in (384, 512, 768, 1024)},
}

# The search index's tables reference documents in the database (migration 0005, ON DELETE
# CASCADE) but models/index.py leaves the foreign keys undeclared (its tables live on a
# metadata of their own, without ``docs``); they are part of the schema the code relies on
# (deleting a document drops its chunks), so the comparison expects them.
_INDEX_FOREIGN_KEYS = {"doc_vectors": "doc_id", "chunks": "doc_id"}


def include_name(name: str | None, type_: NameFilterType, parent_names: NameFilterParentNames) -> bool:
    """Alembic's ``include_name`` hook: leave out what migrations create by raw SQL on purpose."""
    if type_ == "table":
        return not (name and _FTS5_TABLE.match(name))
    if type_ == "column":
        return (parent_names.get("table_name"), name) not in _RAW_COLUMNS
    if type_ == "index":
        return name not in _RAW_INDEXES
    return True


def expected_metadata() -> MetaData:
    """Every table the code declares, as one metadata (a fresh copy on each call)."""
    from sqlmodel import SQLModel

    from dokoro_store.models import register_all
    from dokoro_store.models.index import INDEX_METADATA

    expected = MetaData()
    register_all()
    for table in SQLModel.metadata.sorted_tables:
        table.to_metadata(expected)
    for table in INDEX_METADATA.sorted_tables:
        existing = expected.tables.get(table.name)
        if existing is None:
            table.to_metadata(expected)
            continue
        # A partial view of a model's table (summary_vectors over conversation_summaries): its
        # extra columns (the summary embeddings) belong to the same table in the database.
        for column in table.columns:
            if column.name not in existing.columns:
                existing.append_column(column._copy())
    for name, column_name in _INDEX_FOREIGN_KEYS.items():
        expected.tables[name].append_constraint(
            ForeignKeyConstraint([column_name], ["docs.id"], ondelete="CASCADE"),
        )
    return expected


def schema_drift(connection: Connection) -> list[Any]:
    """Alembic's autogenerate diff between :func:`expected_metadata` and the connected database.

    Empty when they agree; otherwise the operations a migration would need (``add_column``,
    ``remove_index``, ``modify_type``, ...), as Alembic's ``compare_metadata`` returns them.
    """
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    context = MigrationContext.configure(connection, opts={**COMPARE_OPTIONS, "include_name": include_name})
    with warnings.catch_warnings():
        # SQLAlchemy does not know pgvector's type; the column is left out by include_name, but
        # reflecting its table still warns about it.
        warnings.filterwarnings(
            "ignore", message="Did not recognize type 'vector' of column 'embedding_", category=SAWarning
        )
        return list(compare_metadata(context, expected_metadata()))


def describe_drift(diff: list[Any]) -> list[str]:
    """One line per difference, e.g. ``add_column memories.pinned``.

    Alembic's names: ``add_*`` is declared in the code but missing from the database,
    ``remove_*`` is in the database but not declared, ``modify_*`` differs (database → code).
    """
    lines: list[str] = []
    for item in diff:
        # Column changes come grouped in a list per column; everything else is one tuple.
        for op in item if isinstance(item, list) else [item]:
            kind = op[0]
            if kind.startswith("modify_"):
                lines.append(f"{kind} {op[2]}.{op[3]}: {_shown(op[5])} → {_shown(op[6])}")
            elif kind in ("add_column", "remove_column"):
                lines.append(f"{kind} {op[2]}.{op[3].name}")
            else:
                lines.append(f"{kind} {_named(op[1])}")
    return sorted(lines)


def _named(target: Any) -> str:
    """``table``, ``table.index_name``, or ``table(columns)`` for an unnamed constraint."""
    table = getattr(target, "table", None)
    if table is None:
        return str(target.name)
    if target.name:
        return f"{table.name}.{target.name}"
    columns = getattr(target, "column_keys", None) or [column.name for column in target.columns]
    return f"{table.name}({', '.join(columns)})"


def _shown(value: Any) -> str:
    if isinstance(value, DefaultClause):
        return repr(str(getattr(value.arg, "text", value.arg)))
    return repr(value)
