"""A team URL on an install without the PostgreSQL driver says what to run: the uvx recipe with the
team extra (a single server package does not carry it; the unified `dokoro` does)."""

from __future__ import annotations

import sys

import pytest
from dokoro_store import StoreUnavailableError
from dokoro_store.db.engine import Database


def test_the_missing_driver_names_the_uvx_recipe_with_the_postgres_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` now raises ImportError

    with pytest.raises(StoreUnavailableError) as refused:
        Database.open_url("postgresql://dokoro@db.internal/dokoro", tmp_path)

    message = str(refused.value)
    assert "uvx --with 'dokoro-store[postgres]' --from dokoro-core dokoro-core" in message
    assert "pip install" not in message.replace("uv pip install", "")
