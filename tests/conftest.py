"""Fixtures shared by the cross-package tests: real server processes over stdio."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ServerParams = Callable[..., StdioServerParameters]


def _server_params(module: str, store: Path, cwd: Path, **env: str) -> StdioServerParameters:
    environment = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT", "TMPDIR")}
    environment.update(DOKORO_PATH=str(store), PYTHONUNBUFFERED="1", **env)
    return StdioServerParameters(command=sys.executable, args=["-m", module], env=environment, cwd=str(cwd))


@pytest.fixture
def server_params() -> ServerParams:
    """Factory: parameters that start ``python -m <module>`` as a real server process over stdio."""
    return _server_params
