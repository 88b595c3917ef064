"""The plan-feature prompt through the MCP client: its arguments, the plans in flight it finds by
meaning (as the planning tools list them), and the tools it names."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_plan_feature_takes_a_feature_and_optional_context(client):
    prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}

    assert [(a.name, a.required) for a in prompts["plan-feature"].arguments] == [
        ("feature", True),
        ("context", False),
    ]


async def test_plan_feature_lists_a_similar_plan_in_flight_and_the_steps(client, store):
    plan = store.plans.create(
        "Session refresh under an advisory lock",
        ["Take a PostgreSQL advisory lock in the refresh worker", "Release it at commit"],
    )

    prompt = await client.get_prompt(
        "plan-feature", {"feature": "refresh sessions with an advisory lock", "context": "PostgreSQL only"}
    )

    text = prompt.messages[0].content.text
    assert text.startswith("Plan this feature: refresh sessions with an advisory lock")
    assert "Context: PostgreSQL only" in text
    assert f"`{plan.id}` (active, 0%" in text
    for tool in ("dokoro_check_duplicate", "dokoro_detect_conflicts", "dokoro_plan_feature", "dokoro_plan_create"):
        assert tool in text


async def test_plan_feature_without_a_feature_is_refused(client):
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError):  # the SDK checks required arguments (and words its own error)
        await client.get_prompt("plan-feature", {})
