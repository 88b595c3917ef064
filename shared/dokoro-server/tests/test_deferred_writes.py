"""Session time tracking is queued in memory by each tool call and written off the request path:
by a background writer, by every reader of the session's timing, and when the session ends."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio


def _usage(root: Path) -> dict[str, int]:
    return json.loads((root / ".mcp" / "session.json").read_text(encoding="utf-8")).get("tool_usage", {})


async def test_a_reader_of_the_session_time_sees_every_call_before_it(make_client) -> None:
    async with make_client(auto_feedback=False) as client:
        await client.call_tool("kit_claim", {"task": "fix login"})
        await client.call_tool("kit_echo", {"text": "one"})
        await client.call_tool("kit_echo", {"text": "two"})

        counted = await client.call_tool("kit_tool_calls", {})

    assert counted.content[0].text == "3"  # the claim and two echoes; the reader counts after it answers


async def test_what_is_queued_is_written_when_the_session_ends(make_client, root) -> None:
    async with make_client(auto_feedback=False) as client:
        await client.call_tool("kit_claim", {"task": "fix login"})
        for _ in range(5):
            await client.call_tool("kit_echo", {"text": "x"})

    assert _usage(root) == {"kit_claim": 1, "kit_echo": 5}


async def test_the_background_writer_writes_the_queue_without_a_reader(make_client, root) -> None:
    async with make_client(auto_feedback=False) as client:
        await client.call_tool("kit_claim", {"task": "fix login"})
        await client.call_tool("kit_echo", {"text": "x"})
        deadline = time.monotonic() + 30
        while _usage(root) != {"kit_claim": 1, "kit_echo": 1}:  # bounded: written a moment after the call
            assert time.monotonic() < deadline, _usage(root)
            time.sleep(0.05)
