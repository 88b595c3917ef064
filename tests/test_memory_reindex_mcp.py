"""The memory files are a true source: the database deleted, ``dokoro_memory_status`` says the files
and the rows differ, and one ``dokoro_memory_reindex`` over MCP (a real stdio server process)
brings every memory back with its state, trust and supersede chain. Both backends."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAST = {"DOKORO_EMBEDDER": "hashing", "DOKORO_AGENT_ID": "alice"}


def _drop_database(url: str) -> None:
    """Drop the PostgreSQL database of ``url`` and make it again, empty at the current schema."""
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    name = parsed.database
    admin = parsed.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "dokoro_template"')


async def _memories(client: Client) -> dict[str, dict[str, Any]]:
    found = await client.call_tool("dokoro_recall", {"query": "deploy", "include_archived": True, "limit": 50})
    return {h["memory"]["id"]: h["memory"] for h in found.structured_content["hits"]}


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_the_database_deleted_one_reindex_brings_every_memory_back(
    server_params: Callable[..., StdioServerParameters], tmp_path: Path, database_url: str | None
) -> None:
    root = tmp_path / "dokoro"
    env = {**FAST, **({"DOKORO_DATABASE_URL": database_url} if database_url else {})}
    async with Client(server_params("dokoro_core", root, tmp_path, **env)) as client:
        first = await client.call_tool(
            "dokoro_remember", {"type": "decision", "title": "Deploy on Fridays", "body": "We deploy on Fridays."}
        )
        old = first.structured_content["memory"]["id"]
        await client.call_tool(
            "dokoro_remember",
            {"type": "decision", "title": "Deploy on Mondays", "body": "We deploy on Mondays now.", "supersedes": old},
        )
        stated = await client.call_tool(
            "dokoro_remember",
            {"type": "rule", "title": "Deploy checklist", "body": "Run the deploy checklist.", "trust": "user-stated"},
        )
        gone = await client.call_tool(
            "dokoro_remember", {"type": "fact", "title": "Deploy host", "body": "We deploy to host-a."}
        )
        await client.call_tool(
            "dokoro_forget", {"id": gone.structured_content["memory"]["id"], "reason": "host-a is retired"}
        )
        before = await _memories(client)
    assert len(before) == 4 and stated.structured_content["memory"]["trust"] == "user-stated"

    if database_url is None:
        shutil.rmtree(root / ".dokoro" / "db")
    else:
        _drop_database(database_url)

    async with Client(server_params("dokoro_core", root, tmp_path, **env)) as client:
        status = await client.call_tool("dokoro_memory_status", {})
        check = status.structured_content["files_check"]
        assert status.structured_content["total"] == 0
        assert check["in_step"] is False and "dokoro_memory_reindex" in check["message"]
        assert "differ" in status.content[0].text

        rebuilt = await client.call_tool("dokoro_memory_reindex", {})
        assert not rebuilt.is_error, rebuilt.content
        assert rebuilt.structured_content["restored"] == 4

        after = await _memories(client)
        fields = ("state", "trust", "type", "title", "body", "supersedes", "superseded_by", "state_reason")
        assert {i: {f: m[f] for f in fields} for i, m in after.items()} == {
            i: {f: m[f] for f in fields} for i, m in before.items()
        }
        assert (await client.call_tool("dokoro_memory_status", {})).structured_content["files_check"]["in_step"]
