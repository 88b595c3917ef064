"""Fixtures of the store's unit tests: a frozen clock and stores in ``tmp_path``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store

# A Wednesday evening in UTC.
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "dokoro"


@pytest.fixture
def store(root: Path, clock: FrozenClock) -> Iterator[Store]:
    """A store on the embedded SQLite default."""
    with Store.open(root, clock=clock) as opened:
        yield opened


@pytest.fixture
def any_store(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    """A store on each backend in turn: SQLite, then a fresh PostgreSQL database."""
    with Store.open(root, database_url=database_url, clock=clock) as opened:
        yield opened
