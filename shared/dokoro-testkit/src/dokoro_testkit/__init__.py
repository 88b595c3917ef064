"""The pytest fixtures of dokoro's own test suites (a development dependency only).

The fixtures are in :mod:`dokoro_testkit.fixtures`, enabled by the workspace's root
``conftest.py`` (``pytest_plugins``); the names tests annotate with are re-exported here.
"""

from dokoro_testkit.fixtures import START, Call, Connect, Fail, MakeClient, Snapshot

__all__ = ["START", "Call", "Connect", "Fail", "MakeClient", "Snapshot"]
