"""The migrations build exactly the schema the code declares, on SQLite and PostgreSQL.

Alembic's autogenerate comparison (types, nullability, indexes, unique constraints, foreign
keys, server defaults) runs against a freshly migrated database of each backend; any difference
is drift: a model changed without a migration, or a migration the models do not describe.
"""

from __future__ import annotations

from dokoro_store import Store
from dokoro_store.db.schema import describe_drift, expected_metadata, schema_drift
from sqlalchemy import Column, Index, String


def test_a_freshly_migrated_database_matches_the_declared_tables(tmp_path, database_url):
    with Store.open(tmp_path / "dokoro", database_url=database_url) as store, store.db.engine.connect() as connection:
        drift = schema_drift(connection)

    lines = describe_drift(drift)
    # add_* = declared in the code, missing from the database; remove_* = the other way round.
    assert not lines, "the migrations and the declared tables disagree:\n" + "\n".join(lines)


def test_the_comparison_notices_a_column_and_an_index_the_migrations_lack(tmp_path, database_url, monkeypatch):
    import dokoro_store.db.schema as schema

    def drifted():
        metadata = expected_metadata()
        memories = metadata.tables["memories"]
        memories.append_column(Column("pinned_by", String, nullable=True))
        Index("ix_memories_type_only", memories.c.type)
        return metadata

    monkeypatch.setattr(schema, "expected_metadata", drifted)
    with Store.open(tmp_path / "dokoro", database_url=database_url) as store, store.db.engine.connect() as connection:
        drift = schema_drift(connection)

    assert describe_drift(drift) == ["add_column memories.pinned_by", "add_index memories.ix_memories_type_only"]
