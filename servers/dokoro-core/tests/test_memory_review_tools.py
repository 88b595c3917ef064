"""The review queue through the MCP client (DOKORO_MEMORY_REVIEW=true): agents' inferences wait as
proposed; recall shows them only with include_proposed; a person's approval makes them count."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_testkit import MakeClient
from mcp import Client

pytestmark = pytest.mark.anyio

CI = dict(type="fact", title="CI runs on push", body="The CI pipeline runs on every push to main.", entities=["ci"])


@pytest.fixture
async def review_client(make_client: MakeClient) -> AsyncIterator[Client]:
    async with make_client(agent_id="claude", memory_review=True) as connected:
        yield connected


@pytest.fixture
def person(root: Path, clock: FrozenClock, store_url: str | None) -> Iterator[Store]:
    """The person's side: the same store, opened by the CLI."""
    with Store.open(root, database_url=store_url, clock=clock, memory_review=True) as opened:
        yield opened


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_an_inferred_memory_waits_for_review_and_recall_shows_it_only_when_asked(review_client, person):
    remembered = await review_client.call_tool("dokoro_remember", CI)
    memory = remembered.structured_content["memory"]
    assert memory["state"] == "proposed"
    assert "waits for a person's review" in remembered.content[0].text

    hidden = await review_client.call_tool("dokoro_recall", {"query": "CI pipeline push"})
    assert hidden.structured_content["hits"] == []
    shown = await review_client.call_tool("dokoro_recall", {"query": "CI pipeline push", "include_proposed": True})
    assert [h["memory"]["id"] for h in shown.structured_content["hits"]] == [memory["id"]]
    assert "[fact, proposed]" in shown.content[0].text
    status = await review_client.call_tool("dokoro_memory_status", {})
    assert status.structured_content["by_state"] == {"proposed": 1}
    assert "waiting for review: 1" in status.content[0].text

    person.memories.approve(memory["id"], by="ana")

    after = await review_client.call_tool("dokoro_recall", {"query": "CI pipeline push"})
    assert [h["memory"]["state"] for h in after.structured_content["hits"]] == ["active"]


async def test_an_agents_claim_of_user_stated_still_waits_for_a_person(review_client):
    remembered = await review_client.call_tool("dokoro_remember", {**CI, "trust": "user-stated"})
    assert remembered.structured_content["memory"]["state"] == "proposed"
    assert "does not skip the review queue" in remembered.content[0].text


async def test_a_rejected_proposal_stays_out_of_recall(review_client, person):
    memory = (await review_client.call_tool("dokoro_remember", CI)).structured_content["memory"]

    person.memories.reject(memory["id"], reason="CI runs nightly only", by="ana")

    shown = await review_client.call_tool("dokoro_recall", {"query": "CI pipeline push", "include_proposed": True})
    assert shown.structured_content["hits"] == []


async def test_a_persons_edit_of_a_memory_file_is_reported_to_the_agent(call, root):
    memory = (await call("dokoro_remember", **CI)).structured_content["memory"]
    path = next((root / "memories" / "fact").glob(f"{memory['id']}-*.md"))
    path.write_text(path.read_text().replace("every push to main", "every push to any branch"), encoding="utf-8")

    outcome = await call("dokoro_recall", query="CI pipeline push")

    files = outcome.structured_content["files"]
    [change] = files["changes"]
    assert change["action"] == "new_version" and change["memory_id"] == memory["id"]
    assert "memory files edited by a person" in outcome.content[0].text
    assert [h["memory"]["id"] for h in outcome.structured_content["hits"]] == [change["new_id"]]
