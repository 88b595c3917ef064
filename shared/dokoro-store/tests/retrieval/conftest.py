"""Fixtures of the retrieval tests: stores on both backends with a chosen embedder and vector engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig

OpenStore = Callable[..., Store]


@pytest.fixture
def open_store(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[OpenStore]:
    """Factory: ``open_store(embedder="hashing", vector_engine="exact")`` on each backend in turn."""
    opened: list[Store] = []

    def make(**config: object) -> Store:
        store = Store.open(root, database_url=database_url, clock=clock, retrieval=RetrievalConfig(**config))  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def search_store(open_store: OpenStore) -> Store:
    """A store with the bundled static embedder (the default) on each backend."""
    return open_store()
