"""Coordination and feedback on the shared HTTP server: each token acts for its own agent only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio


async def test_claims_notes_and_feedback_belong_to_the_tokens_agent(
    http_server: str, tokens: dict[str, str], tmp_path: Path, connect
) -> None:
    async with connect(http_server, tokens["alice"]) as alice:
        claimed = await alice.call_tool("dokoro_file_claim", {"paths": ["src/app.py"], "intent": "refactor"})
        assert not claimed.is_error and claimed.structured_content["agent_id"] == "alice"
        await alice.call_tool("dokoro_presence_ping", {"current_focus": "app"})

    async with connect(http_server, tokens["bob"]) as bob:
        release = await bob.call_tool("dokoro_file_release", {"agent_id": "alice", "all": True})
        posing = await bob.call_tool("dokoro_file_claim", {"paths": ["src/app.py"], "agent_id": "alice"})
        conflict = await bob.call_tool("dokoro_file_claim", {"paths": ["src/app.py"]})
        note = await bob.call_tool("dokoro_shared_note_append", {"content": "waiting for app.py"})
        feedback = await bob.call_tool("dokoro_feedback_query", {"agent_id": "bob"})

    assert release.is_error and "authenticated as 'bob' and cannot act as 'alice'" in release.content[0].text
    assert posing.is_error
    assert not conflict.is_error
    holder = json.loads(conflict.content[1].text)["report"][0]["holder"]
    assert (holder["agent_id"], holder["intent"], holder["presence"]) == ("alice", "refactor", "live")
    assert note.content[0].text == "note appended by bob"
    # Capture records each call for the token's agent: bob's two refused calls are failures.
    lines = feedback.content[0].text.splitlines()
    assert any(line.startswith("dokoro_file_release: total=1 success=0 failure=1") for line in lines)
    assert any(line.startswith("dokoro_file_claim: total=2 success=1 failure=1") for line in lines)
