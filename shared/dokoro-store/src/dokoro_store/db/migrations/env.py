"""Alembic environment: migrations run on the connection the store hands over.

``target_metadata`` is every table the code declares (models and search index), so Alembic's
autogenerate compares it with the database; ``tests/test_migration_drift.py`` fails on any
difference. ``include_name`` leaves out the objects migrations create by raw SQL on purpose.
"""

from __future__ import annotations

from alembic import context
from dokoro_store.db.schema import COMPARE_OPTIONS, expected_metadata, include_name

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=expected_metadata(),
    include_name=include_name,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=True,
    **COMPARE_OPTIONS,
)
with context.begin_transaction():
    context.run_migrations()
