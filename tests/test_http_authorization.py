"""The authorization matrix of the shared HTTP server: two agents with their own tokens.

alice (the victim) claims the workspace and writes a memory, a private plan and a handoff for
carol; bob (the attacker, a real second client of the same ``dokoro serve --http --require-token``
process) tries every tool that touches another agent's data. Each attack must be refused with a
message that says what bob may do instead, and alice's data must be unchanged afterwards (read
back through alice's own client and from the store folder). The rules are in docs/team.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@asynccontextmanager
async def _connect(url: str, token: str) -> AsyncIterator[Client]:
    """A client of the shared server with a patient read timeout: the first memory loads the
    embedder in the server, which takes a while on a busy machine (this test checks rules, not speed)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(300.0)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def _text(outcome: Any) -> str:
    return "\n".join(str(getattr(block, "text", "")) for block in outcome.content)


# (tool, arguments (with {memory}, {plan}, {handoff}, {task} filled in), what the refusal must say)
ATTACKS: list[tuple[str, dict[str, Any], str]] = [
    ("dokoro_forget", {"id": "{memory}", "purge": True, "confirm": True}, "may not purge"),
    ("dokoro_forget", {"id": "{memory}", "reason": "TTL changed"}, "is alice's memory; you (bob) may not deprecate"),
    ("dokoro_memory_renew", {"id": "{memory}", "retire": True, "reason": "old"}, "may not retire"),
    ("dokoro_remember", {"type": "fact", "title": "TTL", "body": "ten", "supersedes": "{memory}"}, "may not supersede"),
    ("dokoro_session_log", {"entry": "bob was here"}, "held by alice"),
    ("dokoro_update_current_section", {"section": "Next Steps", "content": "bob's plan"}, "held by alice"),
    ("dokoro_regenerate_current", {"includeDays": 7}, "held by alice"),
    ("dokoro_workspace_dump", {"reason": "take it", "keepActive": False}, "held by alice"),
    ("dokoro_workspace_claim", {"task": "bob's hotfix"}, "locked by alice"),
    ("dokoro_workspace_claim", {"task": "bob's hotfix", "force": True}, "only a stale lock"),
    ("dokoro_plan_check", {"itemIndex": 1, "planId": "{plan}"}, "belongs to alice"),
    ("dokoro_plan_check", {"itemIndex": 2, "planId": "{plan}", "uncheck": True}, "belongs to alice"),
    ("dokoro_plan_validate", {"planId": "{plan}"}, "belongs to alice"),
    ("dokoro_handoff_claim", {"handoff_id": "{handoff}"}, "addressed to carol"),
    ("dokoro_task_track", {"action": "complete", "task_id": "{task}"}, "tasks belong to the agent"),
    ("dokoro_handoff_claim", {"handoff_id": "{handoff}", "agent_id": "carol"}, "cannot act as 'carol'"),
    ("dokoro_file_release", {"agent_id": "alice", "all": True}, "cannot act as 'alice'"),
    ("dokoro_file_claim", {"paths": ["src/app.py"], "agent_id": "alice", "force": True}, "cannot act as 'alice'"),
    ("dokoro_remember", {"type": "fact", "title": "t", "body": "b", "agent_id": "alice"}, "cannot act as 'alice'"),
    ("dokoro_block_write", {"block_key": "k", "content": "c", "agent_id": "alice"}, "cannot act as 'alice'"),
    ("dokoro_shared_note_append", {"content": "c", "agent_id": "alice"}, "cannot act as 'alice'"),
    ("dokoro_handoff_write", {"summary": "s", "from_agent": "alice"}, "cannot act as 'alice'"),
    ("dokoro_presence_ping", {"agent_id": "alice", "current_focus": "x"}, "cannot act as 'alice'"),
    ("dokoro_feedback_record", {"tool_name": "x", "outcome": "success", "agent_id": "alice"}, "cannot act as 'alice'"),
    ("dokoro_ambient_context", {}, "off over HTTP"),
    ("dokoro_save_file", {"source": "dokoro/current.md"}, "not accepted on the shared HTTP server"),
    ("dokoro_init", {"projectPath": "elsewhere"}, "not accepted on the shared HTTP server"),
]


async def _alices_view(alice: Any, root: Path, memory: str, plan: str) -> dict[str, Any]:
    status = (await alice.call_tool("dokoro_workspace_status", {})).structured_content
    shown = (await alice.call_tool("dokoro_plan_status", {"planId": plan})).structured_content["plan"]
    inbox = (await alice.call_tool("dokoro_handoff_inbox", {"agent_id": "carol"})).structured_content
    recalled = (await alice.call_tool("dokoro_recall", {"query": "cache TTL five minutes"})).structured_content
    claims = (await alice.call_tool("dokoro_claim_list", {"agent_id": "alice"})).structured_content
    tasks = (await alice.call_tool("dokoro_task_list", {})).structured_content
    return {
        "tasks": [
            (t["id"], t["status"])
            for group in ("active", "paused", "completed", "abandoned")
            for t in tasks.get(group, [])
        ],
        "current.md": (root / "current.md").read_bytes(),
        "lock": (status["locked_by"], status["session_id"]),
        "plan": (shown["status"], [item["completed"] for item in shown["items"]], shown["archived"]),
        "handoffs": [(h["id"], h["status"]) for h in inbox["handoffs"]],
        "memory": [(h["memory"]["id"], h["memory"]["state"]) for h in recalled["hits"] if h["memory"]["id"] == memory],
        "claims": [
            (c["path"], c["agent_id"], c["intent"], c["expires_at"], c["heartbeat_seq"]) for c in claims["claims"]
        ],
    }


async def test_another_agents_token_can_neither_destroy_nor_take_over_alices_data(
    http_server: str, tokens: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "dokoro"
    async with _connect(http_server, tokens["alice"]) as alice, _connect(http_server, tokens["bob"]) as bob:
        claimed = await alice.call_tool("dokoro_workspace_claim", {"task": "alice's refactor"})
        assert not claimed.is_error, _text(claimed)
        assert claimed.structured_content["agent_id"] == "alice"
        await alice.call_tool("dokoro_session_log", {"entry": "moved the cache"})
        memory = (
            await alice.call_tool(
                "dokoro_remember", {"type": "fact", "title": "Cache TTL is five minutes", "body": "set in config"}
            )
        ).structured_content["memory"]["id"]
        plan = await alice.call_tool("dokoro_plan_create", {"title": "alice's plan", "items": ["one", "two"]})
        assert plan.structured_content["shared"] is False
        plan_id = plan.structured_content["id"]
        await alice.call_tool("dokoro_plan_check", {"itemIndex": 2, "planId": plan_id})
        handoff = (
            await alice.call_tool("dokoro_handoff_write", {"summary": "review the PR", "to_agent": "carol"})
        ).structured_content["id"]
        await alice.call_tool("dokoro_file_claim", {"paths": ["src/app.py"], "intent": "refactor"})
        task = (
            await alice.call_tool("dokoro_task_track", {"action": "start", "title": "the cache"})
        ).structured_content["task"]["id"]
        before = await _alices_view(alice, root, memory, plan_id)
        assert before["memory"] == [(memory, "active")] and before["lock"][0] == "alice"

        refused = 0
        for tool, template, says in ATTACKS:
            arguments = {
                key: (
                    {"{memory}": memory, "{plan}": plan_id, "{handoff}": handoff, "{task}": task}.get(value, value)
                    if isinstance(value, str)
                    else value
                )
                for key, value in template.items()
            }
            outcome = await bob.call_tool(tool, arguments)
            assert outcome.is_error, f"bob's {tool}({arguments}) was accepted: {_text(outcome)}"
            assert says in _text(outcome), f"bob's {tool} refusal does not say {says!r}: {_text(outcome)}"
            assert await _alices_view(alice, root, memory, plan_id) == before, f"bob's {tool} changed alice's data"
            refused += 1
        assert refused == len(ATTACKS)

        # What bob may do: read, add a blocker, ask a question (its line stays out of alice's log),
        # remember what he knows as his own memory beside alice's, take a handoff for anyone.
        blocker = await bob.call_tool(
            "dokoro_plan_blocker", {"itemIndex": 1, "blocker": "needs a key", "planId": plan_id}
        )
        question = await bob.call_tool("dokoro_question_add", {"question": "which cache?"})
        assert not blocker.is_error and not question.is_error
        assert (root / "current.md").read_bytes() == before["current.md"]
        beside = await bob.call_tool("dokoro_remember", {"type": "fact", "title": "Cache TTL is ten", "body": "now"})
        assert not beside.is_error, _text(beside)
        status = await bob.call_tool("dokoro_memory_status", {})
        assert not status.is_error

        # alice still works on her own data.
        own = await alice.call_tool("dokoro_session_log", {"entry": "still mine"})
        checked = await alice.call_tool("dokoro_plan_check", {"itemIndex": 1, "planId": plan_id})
        purged = await alice.call_tool("dokoro_forget", {"id": memory, "purge": True, "confirm": True})
        assert not own.is_error and not checked.is_error and not purged.is_error, _text(purged)
        assert "still mine" in (root / "current.md").read_text(encoding="utf-8")


async def test_a_full_reindex_over_http_is_the_operators(
    http_server: str, tokens: dict[str, str], tmp_path: Path
) -> None:
    """An agent's token may bring the index up to date, not rebuild the whole store; an operator's
    token (``dokoro token create --operator``) may."""
    from dokoro_store import Store

    with Store.open(tmp_path / "dokoro") as store:
        operator = store.tokens.create("ops", operator=True).token
    async with _connect(http_server, tokens["bob"]) as bob, _connect(http_server, operator) as ops:
        full = await bob.call_tool("search_reindex", {"full": True})
        memories = await bob.call_tool("dokoro_memory_reindex", {"full": True})
        for refused in (full, memories):
            assert refused.is_error, _text(refused)
            assert "is the operator's on the shared server" in _text(refused), _text(refused)
            assert "your token (bob) is an agent's: nothing was done" in _text(refused)
            assert "dokoro token create --agent NAME --operator" in _text(refused)
        assert "`dokoro reindex --full`" in _text(full) and "`dokoro memory reindex`" in _text(memories)
        incremental = await bob.call_tool("search_reindex", {})
        assert not incremental.is_error, _text(incremental)

        rebuilt = await ops.call_tool("search_reindex", {"full": True})
        assert not rebuilt.is_error, _text(rebuilt)
        assert "Search Index Rebuilt" in _text(rebuilt)
