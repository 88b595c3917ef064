"""The answer of ``test_connection``: which server answered, over which store."""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import Result

__all__ = ["ConnectionCheck"]


class ConnectionCheck(Result):
    server: str
    version: str
    path: str = Field(description="the store folder (DOKORO_PATH)")
    backend: str = Field(description="sqlite or postgresql")
    agent_id: str = Field(description="who this call acts for")
