"""``dokoro_memory_proposals`` through the MCP client: an agent lists, approves and rejects the
proposals about its own memories, and may not decide another agent's."""

from __future__ import annotations

import pytest
from dokoro_testkit import Connect

pytestmark = pytest.mark.anyio

OLD = dict(title="Staging db", body="The staging database runs PostgreSQL 16 on port 5433", entities=["postgres"])
NEW = dict(title="Staging db port", body="The staging database runs PostgreSQL 15 on port 5432", entities=["postgres"])
LIMIT_OLD = dict(title="Rate limit", body="The API rate limit is 100 requests per minute per user", entities=["api"])
LIMIT_NEW = dict(
    title="Rate limit now", body="The API rate limit is 1000 requests per minute per user", entities=["api"]
)


async def _pair(client, first: dict, second: dict) -> tuple[str, str]:
    old = await client.call_tool("dokoro_remember", {"type": "fact", **first})
    new = await client.call_tool("dokoro_remember", {"type": "fact", **second})
    old_id, new_id = old.structured_content["memory"]["id"], new.structured_content["memory"]["id"]
    assert [c["memory"]["id"] for c in new.structured_content["conflicts"]] == [old_id]
    return old_id, new_id


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_an_agent_approves_and_rejects_the_proposals_about_its_own_memories(connect: Connect):
    async with connect("claude") as claude, connect("gemini") as gemini:
        old_id, new_id = await _pair(claude, OLD, NEW)
        limit_old, limit_new = await _pair(claude, LIMIT_OLD, LIMIT_NEW)

        listed = await claude.call_tool("dokoro_memory_proposals", {})
        assert not listed.is_error, listed.content[0].text
        found = listed.structured_content["listing"]
        assert found["filed"] == 2 and {p["kind"] for p in found["proposals"]} == {"merge"}
        text = listed.content[0].text
        assert "2 new proposal(s) filed" in text and f"supersede {old_id}" in text and "action=approve" in text
        merge = next(p["id"] for p in found["proposals"] if old_id in p["memory_ids"])
        other = next(p["id"] for p in found["proposals"] if limit_old in p["memory_ids"])

        # Another agent sees none of them and may not decide them: nothing changes.
        theirs = await gemini.call_tool("dokoro_memory_proposals", {})
        assert theirs.structured_content["listing"]["proposals"] == []
        assert "No proposed proposals you may decide." in theirs.content[0].text
        refused = await gemini.call_tool("dokoro_memory_proposals", {"action": "approve", "id": merge})
        assert refused.is_error and "changes claude's memory" in refused.content[0].text

        approved = await claude.call_tool("dokoro_memory_proposals", {"action": "approve", "id": merge})
        rejected = await claude.call_tool(
            "dokoro_memory_proposals", {"action": "reject", "id": other, "reason": "both limits exist"}
        )

        assert not approved.is_error, approved.content[0].text
        assert approved.structured_content["decision"]["proposal"]["status"] == "approved"
        assert approved.structured_content["decision"]["proposal"]["decided_by"] == "claude"
        assert f"- {old_id} is now archived" in approved.content[0].text
        assert rejected.structured_content["decision"]["proposal"]["outcome"] == "rejected by claude: both limits exist"
        recalled = await claude.call_tool("dokoro_recall", {"query": "staging database port"})
        shown = {h["memory"]["id"] for h in recalled.structured_content["hits"]}
        assert new_id in shown and old_id not in shown  # archived by the merge
        assert {limit_old, limit_new} <= shown  # the rejected merge left both active
        everything = await claude.call_tool("dokoro_memory_proposals", {"status": "all"})
        statuses = {p["id"]: p["status"] for p in everything.structured_content["listing"]["proposals"]}
        assert statuses == {merge: "approved", other: "rejected"}


async def test_approve_without_an_id_says_how_to_find_one(connect: Connect):
    async with connect("claude") as claude:
        missing = await claude.call_tool("dokoro_memory_proposals", {"action": "approve"})
        unknown = await claude.call_tool("dokoro_memory_proposals", {"action": "reject", "id": "prop_nope"})

    assert missing.is_error and "needs the proposal's id; action=list shows them" in missing.content[0].text
    assert unknown.is_error and "no proposal 'prop_nope'" in unknown.content[0].text


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_an_agent_approves_a_summary_with_its_own_distilled_text(connect: Connect, clock):
    from datetime import timedelta

    async with connect("claude") as claude:
        ids = []
        for title, body in [
            ("Race found", "Found the race in token refresh while two tabs log in."),
            ("Regression test", "Wrote a regression test that opens concurrent sessions."),
            ("Patch shipped", "Released the patch to staging and watched the error rate drop."),
        ]:
            written = await claude.call_tool(
                "dokoro_remember", {"type": "episode", "title": title, "body": body, "entities": ["login"]}
            )
            ids.append(written.structured_content["memory"]["id"])
        clock.advance(timedelta(days=31))

        listed = await claude.call_tool("dokoro_memory_proposals", {"kind": "summarise"})
        [proposal] = listed.structured_content["listing"]["proposals"]
        assert "draft: Summary: 3 episodes about login" in listed.content[0].text
        misplaced = await claude.call_tool(
            "dokoro_memory_proposals", {"action": "reject", "id": proposal["id"], "text": "no"}
        )
        approved = await claude.call_tool(
            "dokoro_memory_proposals",
            {
                "action": "approve",
                "id": proposal["id"],
                "text": "Two tabs logging in raced the token refresh; a lock on refresh fixed it.",
                "title": "Login token refresh race",
            },
        )

    assert misplaced.is_error and "text and title go with action=approve" in misplaced.content[0].text
    assert not approved.is_error, approved.content[0].text
    [summary] = approved.structured_content["decision"]["created"]
    assert (summary["type"], summary["title"]) == ("context", "Login token refresh race")
    assert summary["body"] == "Two tabs logging in raced the token refresh; a lock on refresh fixed it."
    assert summary["agent_id"] == "claude" and all(i in summary["source"] for i in ids)
    assert "new context" in approved.content[0].text
