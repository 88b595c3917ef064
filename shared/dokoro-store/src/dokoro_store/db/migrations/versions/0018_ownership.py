"""Ownership: which plans other agents may work on, and who changed a memory's state.

A plan records its creator (``plans.agent_id``, since 0006); ``plans.shared`` says whether other
agents may check, uncheck and validate it too. Plans written before this revision were created
under the old rule (every agent shares every plan), so they are marked shared; new plans are
their creator's unless created shared. ``memories.state_changed_by`` records the agent whose call last
changed the memory's state (a deprecation by another agent is allowed, and says who did it).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("plans", sa.Column("shared", sa.Boolean(), nullable=False, server_default=sa.false()))
    # Existing plans were shared with every agent when they were written: keep them so.
    op.execute(sa.text("UPDATE plans SET shared = :yes").bindparams(yes=True))
    op.add_column("memories", sa.Column("state_changed_by", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memories") as batch:
        batch.drop_column("state_changed_by")
    with op.batch_alter_table("plans") as batch:
        batch.drop_column("shared")
