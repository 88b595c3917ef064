"""Merge the layer branches (0004–0008) into one head.

The affective/coordination, retrieval, plans, graph and memory layers were developed side by
side, each revising 0003. From here on the revision graph is a single line: every new
migration revises the one head.

Revision ID: 0009
Revises: 0004, 0005, 0006, 0007, 0008
"""

from __future__ import annotations

revision = "0009"
down_revision = ("0004", "0005", "0006", "0007", "0008")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
