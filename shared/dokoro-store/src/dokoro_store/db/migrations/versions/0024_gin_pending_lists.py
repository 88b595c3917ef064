"""PostgreSQL: the full-text GIN indexes keep a short pending list (256 kB instead of 4 MB).

A GIN index with ``fastupdate`` collects new entries in an unsorted pending list, merged into the
index when it passes ``gin_pending_list_limit`` (4 MB by default) or when (auto)vacuum comes round.
Every search reads the whole list: at 10k memories just imported, one term's lookup in
``ix_docs_fts`` took 3-13 ms for a handful of matches, and a recall's full-text leg 40 ms
(20 ms with the lists merged). A 256 kB list keeps the batched inserts and bounds what a search
reads; the lists already there are merged now. SQLite: nothing to do.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

_INDEXES = ("ix_docs_fts", "ix_docs_trgm", "ix_summaries_fts")
PENDING_LIST_KB = 256


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for name in _INDEXES:
        bind.exec_driver_sql(f"ALTER INDEX IF EXISTS {name} SET (gin_pending_list_limit = {PENDING_LIST_KB})")
        if bind.exec_driver_sql(f"SELECT to_regclass('{name}')").scalar() is not None:
            bind.exec_driver_sql(f"SELECT gin_clean_pending_list('{name}'::regclass)")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for name in _INDEXES:
        bind.exec_driver_sql(f"ALTER INDEX IF EXISTS {name} RESET (gin_pending_list_limit)")
