"""Rebuilds from the memory files move forward, never back: each memory gets its own revision, a purge
leaves a tombstone, and the use counters a folder's ledger carries can be read by what changed.

- ``memories.revision``: 1 when a memory is written, one more on every change its file shows. The
  change-number triggers of 0019 stamp it with ``rev`` (an update that sets ``revision`` itself, a
  memory restored from its file, keeps the value it sets). A file shows it: a file whose revision is
  below its row's is behind the database (another machine's folder, a clone not pulled) and is
  brought up to date, never the other way round. Existing memories start at 1.
- ``memory_tombstones``: the id, revision, time and author of each purge (no text): a folder's
  stale file of a purged memory is removed instead of bringing it back.
- ``ix_memories_last_recalled`` (partial): the memories recalled since a folder last wrote their
  use counters to its ledger (``memories/ledger/uses/``), read without reading every row.

Revision ID: 0031files
Revises: 0031capture
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0031files"
down_revision = "0031capture"  # chained after capture when the branches met
branch_labels = None
depends_on = None

# The columns a memory's file shows (0019's) and now its revision: a change to any gives a new rev.
_FILE_COLUMNS = (
    "type, title, body, entities, trust, state, agent_id, session_id, source, created_at, updated_at, "
    "review_after, valid_until, supersedes, superseded_by, state_reason"
)
_NEXT_REV = "(SELECT COALESCE(MAX(rev), 0) + 1 FROM memories)"

# SQLite runs no trigger recursively (recursive_triggers is off): the UPDATE inside does not fire it again.
_SQLITE_UP = [
    "DROP TRIGGER IF EXISTS memories_rev_au",
    f"""CREATE TRIGGER memories_rev_au AFTER UPDATE OF {_FILE_COLUMNS}, revision ON memories BEGIN
        UPDATE memories SET rev = {_NEXT_REV},
            revision = CASE WHEN new.revision = old.revision THEN old.revision + 1 ELSE new.revision END
        WHERE id = new.id;
    END""",
]
_SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS memories_rev_au",
    f"""CREATE TRIGGER memories_rev_au AFTER UPDATE OF {_FILE_COLUMNS} ON memories BEGIN
        UPDATE memories SET rev = {_NEXT_REV} WHERE id = new.id;
    END""",
]

_POSTGRES_UP = [
    f"""CREATE FUNCTION memories_stamp_revision() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('dokoro:memories:rev', 0));
        NEW.rev := {_NEXT_REV};
        IF NEW.revision = OLD.revision THEN
            NEW.revision := OLD.revision + 1;
        END IF;
        RETURN NEW;
    END
    $$""",
    "DROP TRIGGER IF EXISTS memories_rev_bu ON memories",
    f"CREATE TRIGGER memories_rev_bu BEFORE UPDATE OF {_FILE_COLUMNS}, revision ON memories "
    "FOR EACH ROW EXECUTE FUNCTION memories_stamp_revision()",
]
_POSTGRES_DOWN = [
    "DROP TRIGGER IF EXISTS memories_rev_bu ON memories",
    "DROP FUNCTION IF EXISTS memories_stamp_revision()",
    f"CREATE TRIGGER memories_rev_bu BEFORE UPDATE OF {_FILE_COLUMNS} ON memories "
    "FOR EACH ROW EXECUTE FUNCTION memories_stamp_rev()",
]


def upgrade() -> None:
    op.add_column("memories", sa.Column("revision", sa.BigInteger(), nullable=False, server_default="1"))
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_UP if postgres else _SQLITE_UP:
        op.execute(statement)
    op.create_table(
        "memory_tombstones",
        sa.Column("memory_id", sa.String(), primary_key=True),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("purged_at", UtcDateTime(), nullable=False),
        sa.Column("purged_by", sa.String(), nullable=True),
    )
    op.create_index(
        "ix_memories_last_recalled",
        "memories",
        ["last_recalled_at"],
        sqlite_where=sa.text("last_recalled_at IS NOT NULL"),
        postgresql_where=sa.text("last_recalled_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_memories_last_recalled", table_name="memories")
    op.drop_table("memory_tombstones")
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_DOWN if postgres else _SQLITE_DOWN:
        op.execute(statement)
    op.drop_column("memories", "revision")
