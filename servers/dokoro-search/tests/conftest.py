"""Fixtures of the search tool tests: the search tools alone, as the search server serves them.

Clock, store folder, clients, ``call``/``fail`` come from the testkit's fixtures
(:mod:`dokoro_testkit.fixtures`). Data another server's tools would write (a dumped session, session
summaries) is written through the store's services (the kit's ``store`` fixture); the search tools
composed with the other servers are tested by ``tests/test_composition.py``.
"""

from __future__ import annotations

import pytest
from dokoro_search.server import register
from dokoro_server import Register


@pytest.fixture
def registers() -> list[Register]:
    return [register]
