"""Fixtures of the planning tool tests: the planning tools on one store with the bundled static
embedder, shared by every client, with capture off.

Clock, store folder, clients, ``call``/``fail`` come from the testkit's fixtures
(:mod:`dokoro_testkit.fixtures`). Plans and questions the planning tools read are written through the
store's services (``store.plans``, ``store.working.questions``); the planning tools composed with the
other servers are tested by ``tests/test_composition.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_planning.server import register as register_planning
from dokoro_server import DokoroSettings, Register
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig


@pytest.fixture
def registers() -> list[Register]:
    return [register_planning]


@pytest.fixture
def store(root: Path, clock: FrozenClock) -> Iterator[Store]:
    config = RetrievalConfig(embedder="static", vector_engine="exact")
    with Store.open(root, clock=clock, retrieval=config) as opened:
        yield opened


@pytest.fixture
def server_store(store: Store) -> Store:
    return store


@pytest.fixture
def settings(root: Path) -> DokoroSettings:
    return DokoroSettings(path=root, agent_id="unknown", auto_feedback=False)
