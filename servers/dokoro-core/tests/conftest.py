"""Fixtures of the core tool tests: the core tools, served by the kit's test server.

Clock, store folder, clients, ``call``/``fail`` and the file readers come from the kit's pytest
plugin (:mod:`dokoro_testkit.fixtures`).
"""

from __future__ import annotations

import pytest
from dokoro_core.server import register
from dokoro_server import Register


@pytest.fixture
def registers() -> list[Register]:
    return [register]
