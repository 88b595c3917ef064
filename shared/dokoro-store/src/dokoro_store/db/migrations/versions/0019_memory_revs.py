"""Memories get a change number (``rev``), so every folder can render what changed since it last looked.

Each memory is rendered to a markdown file in every workspace folder that uses the database; on a
team PostgreSQL several machines each keep their own folder. A folder keeps the highest ``rev``
it has rendered and asks only for rows above it: O(changed rows), whatever the rows' timestamps
(an import keeps its historical ``updated_at``).

Triggers stamp ``rev`` on insert and on every change of a column the file shows, so no write
path (today's or a future one, raw SQL included) can forget it. Recall counting
(``recall_count``, ``last_recalled_at``) is not in the file and does not move ``rev``.

A number handed out must never be committed after a higher one (a folder would skip it): on
PostgreSQL the trigger takes a transaction-scoped advisory lock before reading ``max(rev)``, so
memory writes commit in ``rev`` order; SQLite's one write lock already serialises them.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

# The columns a memory's file shows; a change to any of them gives the row a new rev.
_FILE_COLUMNS = (
    "type, title, body, entities, trust, state, agent_id, session_id, source, created_at, updated_at, "
    "review_after, valid_until, supersedes, superseded_by, state_reason"
)
_NEXT_REV = "(SELECT COALESCE(MAX(rev), 0) + 1 FROM memories)"

_SQLITE = [
    f"""CREATE TRIGGER memories_rev_ai AFTER INSERT ON memories BEGIN
        UPDATE memories SET rev = {_NEXT_REV} WHERE id = new.id;
    END""",
    f"""CREATE TRIGGER memories_rev_au AFTER UPDATE OF {_FILE_COLUMNS} ON memories BEGIN
        UPDATE memories SET rev = {_NEXT_REV} WHERE id = new.id;
    END""",
]

_POSTGRES = [
    f"""CREATE FUNCTION memories_stamp_rev() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('dokoro:memories:rev', 0));
        NEW.rev := {_NEXT_REV};
        RETURN NEW;
    END
    $$""",
    "CREATE TRIGGER memories_rev_bi BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION memories_stamp_rev()",
    f"CREATE TRIGGER memories_rev_bu BEFORE UPDATE OF {_FILE_COLUMNS} ON memories "
    "FOR EACH ROW EXECUTE FUNCTION memories_stamp_rev()",
]


def upgrade() -> None:
    op.add_column("memories", sa.Column("rev", sa.BigInteger(), nullable=False, server_default="0"))
    # Existing memories are numbered in the order they last changed.
    op.execute(
        "UPDATE memories SET rev = (SELECT n FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY updated_at, id) AS n "
        "FROM memories) AS ordered WHERE ordered.id = memories.id)"
    )
    op.create_index("ix_memories_rev", "memories", ["rev"])
    for statement in _POSTGRES if op.get_bind().dialect.name == "postgresql" else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS memories_rev_bu ON memories")
        op.execute("DROP TRIGGER IF EXISTS memories_rev_bi ON memories")
        op.execute("DROP FUNCTION IF EXISTS memories_stamp_rev()")
    else:
        op.execute("DROP TRIGGER IF EXISTS memories_rev_au")
        op.execute("DROP TRIGGER IF EXISTS memories_rev_ai")
    op.drop_index("ix_memories_rev", "memories")
    op.drop_column("memories", "rev")
