"""Bring a database to the schema this version of dokoro expects, on open.

Alembic is imported only when the stored revisions differ from :data:`HEADS`, so opening an
up-to-date store costs one small query. The revision graph has one head; every new migration
revises it (a test checks this against the migration scripts).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from dokoro_store.db.engine import Database
from dokoro_store.errors import StoreUnavailableError

__all__ = ["HEADS", "MIGRATIONS_DIR", "current_heads", "known_revisions", "schema_label", "upgrade"]

# The head of the revision graph (a test checks this against the migration scripts).
HEADS: frozenset[str] = frozenset({"0031rows"})
MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def current_heads(db: Database) -> frozenset[str]:
    """The revisions the database is at (empty when it has never been migrated)."""
    with db.engine.connect() as connection:
        try:
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
            return frozenset(str(row) for row in rows)
        except DBAPIError:
            return frozenset()


def schema_label(heads: frozenset[str]) -> str:
    return "+".join(sorted(heads)) if heads else "none"


def _alembic_config(connection: object) -> object:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def known_revisions() -> frozenset[str]:
    """Every revision this dokoro ships (script files are named ``<revision>_<slug>.py``)."""
    return frozenset(path.name.split("_", 1)[0] for path in (MIGRATIONS_DIR / "versions").glob("[0-9]*_*.py"))


def upgrade(db: Database, revision: str = "heads", *, current: frozenset[str] | None = None) -> None:
    """Run every pending migration (serialised between processes).

    ``current``: the revisions the caller has just read (:func:`current_heads`), so that opening an
    up-to-date store reads its version once. A database already migrated by a newer dokoro is
    refused with the fix, not a traceback.
    """
    if current is None:
        current = current_heads(db)
    if revision == "heads" and current == HEADS:
        return
    unknown = current - known_revisions()
    if unknown:
        raise StoreUnavailableError(
            f"this store's schema ({schema_label(current)}) was written by a newer dokoro than this one "
            f"(which knows up to {schema_label(HEADS)}); upgrade dokoro on this machine (e.g. `uv tool upgrade "
            "dokoro` or `uvx dokoro@latest`) before opening it"
        )
    from alembic import command

    with db.engine.connect() as connection, db.ops.migration_lock(connection):
        connection.commit()
        command.upgrade(_alembic_config(connection), revision)  # type: ignore[arg-type]
        connection.commit()
