"""Fixtures of the search tool tests: the search tools, beside the core tools as in the unified
server (some tests write through core tools, e.g. a workspace dump, and search what they wrote).

Clock, store folder, clients, ``call``/``fail`` come from the kit's pytest plugin
(:mod:`dokoro_server.testing`). Composing another server's tools happens here, in tests only.
"""

from __future__ import annotations

import pytest
from dokoro_core.server import register as register_core
from dokoro_search.server import register as register_search
from dokoro_server import Register


@pytest.fixture
def registers() -> list[Register]:
    return [register_core, register_search]
