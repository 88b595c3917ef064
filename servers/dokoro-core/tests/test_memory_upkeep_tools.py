"""Memory upkeep over MCP (issue 32): per-type switches refuse a disabled type with the way on,
``depends_on`` in dokoro_remember, retiring flags dependents (and says so), stale in recall,
dokoro_memory_review / dokoro_memory_renew, and the health line atop status and briefing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_testkit import MakeClient
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)]


@pytest.fixture
async def agent(make_client: MakeClient) -> AsyncIterator[Client]:
    async with make_client(agent_id="claude") as connected:
        yield connected


@pytest.fixture
def person(root: Path, clock: FrozenClock, store_url: str | None) -> Iterator[Store]:
    """The person's side: the same store, opened by the CLI."""
    with Store.open(root, database_url=store_url, clock=clock) as opened:
        yield opened


async def test_a_type_switched_off_is_refused_with_the_allowed_types_and_the_way_on(agent, person):
    person.upkeep.switches.set(["preference"], agents_write=False, by="ana")
    person.upkeep.switches.set(["lesson"], needs_review=True, by="ana")

    refused = await agent.call_tool(
        "dokoro_remember", {"type": "preference", "title": "Tabs", "body": "Ana prefers tabs."}
    )
    reviewed = await agent.call_tool(
        "dokoro_remember", {"type": "lesson", "title": "Flaky tests", "body": "Retry flaky tests once, then fix."}
    )
    allowed = await agent.call_tool("dokoro_remember", {"type": "fact", "title": "Port", "body": "API on 8080."})

    assert refused.is_error
    text = refused.content[0].text
    assert "memory type 'preference' is switched off for agents in this store: nothing was stored" in text
    assert "fact, decision, lesson, rule, guardrail, reference, episode" in text
    assert "`dokoro memory types preference --agents-write on`" in text
    assert person.memories.of_types(["preference"], ("active", "proposed")) == []
    assert reviewed.structured_content["memory"]["state"] == "proposed"
    assert "memories of type 'lesson' wait for a person's review" in reviewed.content[0].text
    assert allowed.structured_content["memory"]["state"] == "active"


async def test_retiring_a_memory_flags_its_dependents_and_renewal_clears_them(agent, person):
    base = await agent.call_tool(
        "dokoro_remember", {"type": "decision", "title": "Deploy with Jenkins", "body": "Jenkins runs every deploy."}
    )
    base_id = base.structured_content["memory"]["id"]
    dependent = await agent.call_tool(
        "dokoro_remember",
        {
            "type": "fact",
            "title": "Deploy keys in Jenkins",
            "body": "The deploy keys are Jenkins credentials.",
            "depends_on": [base_id],
        },
    )
    dependent_id = dependent.structured_content["memory"]["id"]
    assert dependent.structured_content["depends_on"] == [base_id]
    assert f"depends on {base_id}" in dependent.content[0].text
    quiet = await agent.call_tool("dokoro_memory_status", {})
    assert quiet.structured_content["health"] is None and not quiet.content[0].text.startswith("⚠️")

    forgot = await agent.call_tool("dokoro_forget", {"id": base_id, "reason": "moved to GitHub Actions"})

    assert forgot.structured_content["dependents_flagged"] == [dependent_id]
    assert f"now stale until renewed: {dependent_id}" in forgot.content[0].text
    recalled = await agent.call_tool("dokoro_recall", {"query": "deploy keys Jenkins credentials"})
    assert f"⏳ stale: depends on {base_id}, which is deprecated" in recalled.content[0].text
    hit = next(h for h in recalled.structured_content["hits"] if h["memory"]["id"] == dependent_id)
    assert hit["stale"] == f"stale: depends on {base_id}, which is deprecated"
    status = await agent.call_tool("dokoro_memory_status", {})
    line = "memory health: 1 stale memory: run `dokoro memory review` (agents: dokoro_memory_review)"
    assert status.structured_content["health"] == line
    assert status.content[0].text.splitlines()[0] == f"⚠️ {line}"
    briefing = await agent.call_tool("dokoro_briefing", {})
    assert briefing.content[0].text.splitlines()[0] == f"⚠️ {line}"
    review = await agent.call_tool("dokoro_memory_review", {})
    assert [e["memory"]["id"] for e in review.structured_content["stale"]] == [dependent_id]
    assert dependent_id in review.content[0].text

    renewed = await agent.call_tool("dokoro_memory_renew", {"id": dependent_id})

    assert renewed.structured_content["action"] == "renewed" and renewed.structured_content["stale"] is None
    after = await agent.call_tool("dokoro_memory_status", {})
    assert after.structured_content["health"] is None
    assert not (await agent.call_tool("dokoro_briefing", {})).content[0].text.startswith("⚠️")


async def test_depends_on_and_renew_refuse_bad_arguments_clearly(agent, person):
    ghost = await agent.call_tool(
        "dokoro_remember", {"type": "fact", "title": "X", "body": "Y.", "depends_on": ["mem_nope"]}
    )
    assert ghost.is_error and "depends_on: no memory 'mem_nope'" in ghost.content[0].text
    assert "Nothing was stored" in ghost.content[0].text
    theirs = person.memories.remember(type="fact", title="Cache TTL", body="60 s.", agent_id="ben").memory

    for arguments, message in [
        ({"id": theirs.id, "review_after": "2999-01-01"}, "is ben's memory"),
        ({"id": theirs.id, "review_after": "soon"}, "review_after"),
        ({"id": theirs.id, "reason": "old"}, "reason goes with retire=true"),
        ({"id": theirs.id, "retire": True}, "reason is required"),
        ({"id": "mem_nope"}, "no memory 'mem_nope'"),
    ]:
        refused = await agent.call_tool("dokoro_memory_renew", arguments)
        assert refused.is_error and message in refused.content[0].text, (arguments, refused.content[0].text)
    assert person.memories.get(theirs.id).state == "active"
