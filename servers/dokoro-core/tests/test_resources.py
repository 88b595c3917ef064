"""The core server's resources and prompts through the MCP client: listed, read, rendered as the
tools render the same things, served while the store opens in the background, and announced as
updated after the tool calls that may change them."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from dokoro_core.server import register
from dokoro_server import DokoroSettings, StoreOpener, build_server
from dokoro_server.resources import resource_updates
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

pytestmark = pytest.mark.anyio

FIXED = ["dokoro://briefing", "dokoro://current", "dokoro://sessions/recent"]


def _text(outcome) -> str:
    return outcome.content[0].text


async def _read(client: Client, uri: str) -> str:
    contents = (await client.read_resource(uri)).contents
    assert len(contents) == 1 and contents[0].mime_type == "text/markdown"
    return contents[0].text


async def test_the_core_server_lists_its_resources_the_plan_template_and_three_prompts(client):
    resources = (await client.list_resources()).resources
    templates = (await client.list_resource_templates()).resource_templates
    prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}

    assert sorted(r.uri for r in resources) == FIXED
    assert all(r.description and r.title and r.mime_type == "text/markdown" for r in resources)
    assert [t.uri_template for t in templates] == ["dokoro://plans/{id}"]
    assert sorted(prompts) == ["end-session", "onboard-project", "resume-session"]
    assert [(a.name, a.required) for a in prompts["resume-session"].arguments] == [("task", False)]
    assert [(a.name, a.required) for a in prompts["end-session"].arguments] == [
        ("session_id", False),
        ("ai_model", False),
    ]


async def test_current_is_a_hint_before_a_claim_and_current_md_after(client, call, root):
    assert "claim the workspace with dokoro_workspace_claim" in await _read(client, "dokoro://current")

    await call("dokoro_workspace_claim", task="Fix the flaky login test")

    assert await _read(client, "dokoro://current") == (root / "current.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_each_resource_shows_what_its_tool_shows(client, call):
    await call("dokoro_workspace_claim", task="Fix the flaky login test")
    await call("dokoro_remember", type="rule", title="Run the login tests", body="Always run the login tests.")
    await call("dokoro_session_summary_add", session_id="s-1", ai_model="m", summary="Found the refresh race.")
    await call("dokoro_session_summary_add", session_id="s-2", ai_model="m", summary="Fixed the refresh race.")
    plan = await call("dokoro_plan_create", title="Fix login", items=["Reproduce", "Fix"])
    plan_id = plan.structured_content["id"]
    await call("dokoro_plan_check", planId=plan_id, itemIndex=1, notes="two tabs")

    assert await _read(client, "dokoro://briefing") == _text(await call("dokoro_briefing"))
    assert await _read(client, "dokoro://sessions/recent") == _text(await call("dokoro_session_recall"))
    assert await _read(client, f"dokoro://plans/{plan_id}") == _text(await call("dokoro_plan_status", planId=plan_id))
    assert "Run the login tests" in await _read(client, "dokoro://briefing")
    recent = await _read(client, "dokoro://sessions/recent")
    assert recent.index("session=s-2") < recent.index("session=s-1")


async def test_an_unknown_plan_is_an_error_that_says_how_to_find_one(client):
    with pytest.raises(MCPError, match="List plans with dokoro_plan_list"):
        await client.read_resource("dokoro://plans/plan-nope")


async def test_a_plan_uri_without_an_id_is_an_error_not_the_newest_plan(client, call):
    await call("dokoro_plan_create", title="Fix login", items=["Reproduce"])

    with pytest.raises(MCPError, match="needs a plan id") as refused:
        await client.read_resource("dokoro://plans/")

    assert refused.value.error.code == INVALID_PARAMS  # the client's fault, not an internal error


async def test_the_prompts_carry_the_briefing_and_the_workspace_and_name_the_tools(client, call):
    await call("dokoro_workspace_claim", task="Fix the flaky login test")
    briefing = _text(await call("dokoro_briefing", focus="login"))

    resume = await client.get_prompt("resume-session", {"task": "login"})
    end = await client.get_prompt("end-session", {"ai_model": "claude-opus-4-7"})

    assert [m.role for m in resume.messages] == ["user"]
    resume_text = resume.messages[0].content.text
    assert briefing in resume_text
    assert 'dokoro_workspace_claim with task="login"' in resume_text
    end_text = end.messages[0].content.text
    status = (await call("dokoro_workspace_status")).structured_content
    assert f'session_id="{status["session_id"]}", ai_model="claude-opus-4-7"' in end_text
    assert "Fix the flaky login test" in end_text
    assert "dokoro_workspace_dump" in end_text and "dokoro_file_release" in end_text


async def test_a_resource_is_read_while_the_store_opens_in_the_background(tmp_path: Path):
    # As a real process serves it: nothing opened the store before the client reads a resource.
    settings = DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False)
    opener = StoreOpener.for_settings(settings, tmp_path)
    mcp = build_server(settings, name="dokoro-test", cwd=tmp_path, store=opener)
    register(mcp)
    try:
        async with Client(mcp) as client:
            assert not opener.started
            text = await _read(client, "dokoro://sessions/recent")
            prompt = await client.get_prompt("resume-session", {})
    finally:
        await anyio.to_thread.run_sync(opener.close)

    assert text == "(no past sessions)"
    assert "# Briefing" in prompt.messages[0].content.text


async def test_a_store_that_cannot_open_answers_a_resource_read_with_the_reason(tmp_path: Path):
    settings = DokoroSettings(path=tmp_path / "dokoro", database_url="mysql://nobody@127.0.0.1/x", auto_feedback=False)
    opener = StoreOpener.for_settings(settings, tmp_path)
    mcp = build_server(settings, name="dokoro-test", cwd=tmp_path, store=opener)
    register(mcp)
    try:
        async with Client(mcp) as client:
            with pytest.raises(MCPError, match="unsupported database URL scheme"):
                await client.read_resource("dokoro://briefing")
    finally:
        await anyio.to_thread.run_sync(opener.close)


async def test_a_tool_call_announces_the_resources_it_may_have_changed(client, call):
    async with client.listen(resource_subscriptions=["dokoro://sessions/recent"]) as updates:
        await call("dokoro_session_summary_add", session_id="s-1", ai_model="m", summary="Found the refresh race.")
        with anyio.fail_after(10):
            event = await anext(aiter(updates))

    assert event.uri == "dokoro://sessions/recent"


def test_only_tools_that_write_announce_updates_and_each_to_its_resources(tmp_path: Path):
    mcp = build_server(DokoroSettings(path=tmp_path / "dokoro"), name="dokoro-test", cwd=tmp_path)
    register(mcp)
    updates = resource_updates(mcp)

    assert updates.changed_by("dokoro_briefing") == []  # read-only
    assert updates.changed_by("dokoro_get_current_focus") == []
    assert sorted(updates.changed_by("dokoro_workspace_claim")) == ["dokoro://briefing", "dokoro://current"]
    assert sorted(updates.changed_by("dokoro_session_summary_add")) == FIXED


async def test_a_store_that_cannot_open_answers_a_prompt_with_the_reason(tmp_path: Path):
    settings = DokoroSettings(path=tmp_path / "dokoro", database_url="mysql://nobody@127.0.0.1/x", auto_feedback=False)
    opener = StoreOpener.for_settings(settings, tmp_path)
    mcp = build_server(settings, name="dokoro-test", cwd=tmp_path, store=opener)
    register(mcp)
    try:
        async with Client(mcp) as client:
            with pytest.raises(MCPError, match="unsupported database URL scheme"):
                await client.get_prompt("end-session", {})
    finally:
        await anyio.to_thread.run_sync(opener.close)
