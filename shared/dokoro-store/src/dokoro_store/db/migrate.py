"""Bring a database to the schema this version of dokoro expects, on open.

Alembic is imported only when the stored revision differs from :data:`HEAD`, so opening an
up-to-date store costs one small query.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from dokoro_store.db.engine import Database

__all__ = ["HEAD", "current_revision", "upgrade"]

HEAD = "0003"
MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def current_revision(db: Database) -> str | None:
    with db.engine.connect() as connection:
        try:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except DBAPIError:
            return None


def _alembic_config(connection: object) -> object:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(db: Database, revision: str = "head") -> None:
    """Run every pending migration (serialised between processes)."""
    if revision == "head" and current_revision(db) == HEAD:
        return
    from alembic import command

    with db.engine.connect() as connection, db.ops.migration_lock(connection):
        connection.commit()
        command.upgrade(_alembic_config(connection), revision)  # type: ignore[arg-type]
        connection.commit()
