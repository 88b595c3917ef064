"""What a tool call answers when something is wrong: the argument checks and error messages of
:mod:`dokoro_server.registration`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
from dokoro_server import DokoroSettings, ToolSpec, add_tools, build_server
from dokoro_server.bounds import Count, Query
from dokoro_store.errors import InvalidArgumentError
from mcp import Client
from pydantic import Field

pytestmark = pytest.mark.anyio


def kit_crash(secret: Annotated[Query, Field(description="Quoted by the crash.")]) -> str:
    """Crash with the argument in the exception's text."""
    raise RuntimeError(f"bug while handling {secret}")


def kit_refuse(count: Annotated[Count, Field(description="A count.")] = 0) -> str:
    """Refuse with the store's message."""
    raise InvalidArgumentError(f"count {count} is not allowed here; pass another")


@pytest.fixture
def server(tmp_path: Path):
    mcp = build_server(DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False), name="kit", cwd=tmp_path)
    add_tools(mcp, [ToolSpec(kit_crash), ToolSpec(kit_refuse)])
    return mcp


async def test_a_crash_answers_with_its_type_and_what_to_do_never_its_text(server, caplog) -> None:
    async with Client(server) as client:
        outcome = await client.call_tool("kit_crash", {"secret": "hunter2"})

    text = outcome.content[0].text
    assert outcome.is_error
    assert text.startswith("kit_crash hit an internal error (RuntimeError): a dokoro bug")
    assert "hunter2" not in text
    assert "Traceback" in caplog.text  # the server log keeps the traceback


async def test_a_store_refusal_keeps_its_own_message_unprefixed(server) -> None:
    async with Client(server) as client:
        outcome = await client.call_tool("kit_refuse", {"count": 3})

    assert outcome.is_error
    assert outcome.content[0].text == "count 3 is not allowed here; pass another"


async def test_several_invalid_arguments_are_each_named(server) -> None:
    async with Client(server) as client:
        outcome = await client.call_tool("kit_refuse", {"count": -(2**63)})
        listing = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}

    assert outcome.content[0].text == (
        "invalid arguments for kit_refuse: count: Input should be greater than or equal to 0 "
        "(got -9223372036854775808). Fix them to match the tool's input schema and call again."
    )
    assert listing["kit_refuse"]["properties"]["count"]["maximum"] == 10**9
    assert listing["kit_crash"]["additionalProperties"] is False
