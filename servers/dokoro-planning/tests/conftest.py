"""Fixtures of the planning tool tests: the core and planning tools (as the unified server has) on
one store with the bundled static embedder, shared by every client, with capture off.

Clock, store folder, clients, ``call``/``fail`` come from the kit's pytest plugin
(:mod:`dokoro_server.testing`). Composing another server's tools happens here, in tests only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_core.server import register as register_core
from dokoro_planning.server import register as register_planning
from dokoro_server import DokoroSettings, Register
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig


@pytest.fixture
def registers() -> list[Register]:
    return [register_core, register_planning]


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
