"""Opening the store on each backend, and refusing clearly when the team database is away."""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro_store import Store, StoreUnavailableError
from dokoro_store.db.migrate import HEADS, current_heads


def test_the_store_opens_on_both_backends_at_the_current_schema(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "s", database_url=database_url) as store:
        assert current_heads(store.db) == HEADS
        assert store.db.dialect == ("sqlite" if database_url is None else "postgresql")


def test_an_unreachable_team_database_names_the_host_and_the_fix(tmp_path: Path) -> None:
    url = "postgresql+psycopg://dokoro:secret@127.0.0.1:9/team"  # port 9 (discard) has no server
    with pytest.raises(StoreUnavailableError) as caught:
        Store.open(tmp_path / "s", database_url=url)
    message = str(caught.value)
    assert "127.0.0.1:9" in message and "DOKORO_DATABASE_URL" in message
    assert "secret" not in message
    assert "does not fall back" in message
    # No local database was created in its place.
    assert not (tmp_path / "s" / ".dokoro" / "db" / "dokoro.sqlite").exists()


def test_a_plain_postgresql_url_uses_the_psycopg_driver(tmp_path: Path, postgres_url: str) -> None:
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with Store.open(tmp_path / "s", database_url=plain) as store:
        assert store.db.url.drivername == "postgresql+psycopg"


def test_an_unsupported_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError, match="unsupported database URL"):
        Store.open(tmp_path / "s", database_url="mysql://x@y/z")


def test_a_team_database_without_a_store_is_named_once_with_the_fix(tmp_path: Path, postgres_url: str) -> None:
    import psycopg
    from dokoro_store import NoStoreError
    from sqlalchemy.engine import make_url

    url = make_url(postgres_url)
    empty = url.set(database=f"{url.database}_empty")
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{empty.database}"')
    try:
        with pytest.raises(NoStoreError) as caught:
            Store.open(tmp_path / "s", database_url=empty.render_as_string(hide_password=False), create=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{empty.database}" WITH (FORCE)')
    message = str(caught.value)
    assert "holds no dokoro store" in message and "dokoro init" in message
    assert message.count("dokoro init") == 1 and "team's database" not in message, message
    assert message.endswith("with this DOKORO_DATABASE_URL to create it"), message
