"""Ownership between stdio servers with different ``DOKORO_AGENT_ID``s: the same rules as over HTTP.

Each ``make_client(agent_id=…)`` is a separate server over the same store, as two agents' stdio
processes would be (the HTTP matrix is ``tests/test_http_authorization.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio


def _text(outcome: Any) -> str:
    return "\n".join(str(getattr(block, "text", "")) for block in outcome.content)


async def test_a_claim_takes_the_name_of_dokoro_agent_id(make_client: Any) -> None:
    async with make_client(agent_id="alice") as alice:
        claimed = await alice.call_tool("dokoro_workspace_claim", {"task": "refactor"})
        status = await alice.call_tool("dokoro_workspace_status", {})

    assert claimed.structured_content["agent_id"] == "alice"
    assert claimed.structured_content["session_id"].endswith("-alice")
    assert status.structured_content["locked_by"] == "alice"


@pytest.mark.slow  # two agents' server processes
async def test_stdio_agents_with_different_ids_keep_out_of_each_others_data(make_client: Any, root: Any) -> None:
    async with make_client(agent_id="alice") as alice, make_client(agent_id="bob") as bob:
        await alice.call_tool("dokoro_workspace_claim", {"task": "refactor"})
        memory = (
            await alice.call_tool("dokoro_remember", {"type": "fact", "title": "TTL five minutes", "body": "b"})
        ).structured_content["memory"]["id"]
        plan = (await alice.call_tool("dokoro_plan_create", {"title": "p", "items": ["a"]})).structured_content["id"]
        before = (root / "current.md").read_bytes()

        attempts = {
            "log": await bob.call_tool("dokoro_session_log", {"entry": "bob"}),
            "section": await bob.call_tool("dokoro_update_current_section", {"section": "X", "content": "y"}),
            "force": await bob.call_tool("dokoro_workspace_claim", {"task": "mine", "force": True}),
            "purge": await bob.call_tool("dokoro_forget", {"id": memory, "purge": True, "confirm": True}),
            "check": await bob.call_tool("dokoro_plan_check", {"itemIndex": 1, "planId": plan}),
        }
        after = (root / "current.md").read_bytes()
        shared = await alice.call_tool("dokoro_plan_create", {"title": "q", "items": ["a"], "shared": True})
        checked = await bob.call_tool("dokoro_plan_check", {"itemIndex": 1, "planId": shared.structured_content["id"]})

    for name, outcome in attempts.items():
        assert outcome.is_error, f"bob's {name} was accepted: {_text(outcome)}"
    assert "held by alice" in _text(attempts["log"]) and "only a stale lock" in _text(attempts["force"])
    assert after == before
    assert not checked.is_error, _text(checked)


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_an_agent_may_not_forget_or_supersede_another_agents_memory_over_mcp(connect: Any) -> None:
    memory = {"type": "fact", "title": "Cache TTL is five minutes", "body": "set in config"}
    async with connect("alice") as alice, connect("bob") as bob:
        alices = (await alice.call_tool("dokoro_remember", memory)).structured_content["memory"]["id"]
        attempts = {
            "deprecate": await bob.call_tool("dokoro_forget", {"id": alices, "reason": "TTL is ten now"}),
            "purge": await bob.call_tool("dokoro_forget", {"id": alices, "purge": True, "confirm": True}),
            "supersede": await bob.call_tool(
                "dokoro_remember", {"type": "fact", "title": "TTL is ten", "body": "ten", "supersedes": alices}
            ),
            "retire": await bob.call_tool("dokoro_memory_renew", {"id": alices, "retire": True, "reason": "old"}),
        }
        for action, outcome in attempts.items():
            assert outcome.is_error, f"bob's {action} was accepted: {_text(outcome)}"
            assert f"is alice's memory; you (bob) may not {action}" in _text(outcome), _text(outcome)
        recalled = await alice.call_tool("dokoro_recall", {"query": "cache TTL five minutes"})
        states = {h["memory"]["id"]: h["memory"]["state"] for h in recalled.structured_content["hits"]}
        assert states[alices] == "active"
        own = await alice.call_tool("dokoro_forget", {"id": alices, "reason": "TTL is ten now"})
        assert not own.is_error, _text(own)
