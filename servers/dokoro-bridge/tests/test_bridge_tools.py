"""The bridge tools through an MCP client: what tachibot sends in, and what it gets back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro_bridge.server import create_server
from dokoro_server import DokoroSettings
from mcp import Client
from mcp_types import CallToolResult

pytestmark = pytest.mark.anyio


def text_of(outcome: CallToolResult) -> str:
    return outcome.content[0].text if outcome.content else ""  # type: ignore[union-attr]


ANSWER = (
    "PostgreSQL advisory locks: pg_advisory_xact_lock is released at commit or rollback, so a crashed "
    "worker never leaves a lock behind. pg_try_advisory_lock returns false at once instead of waiting."
)


async def test_research_is_indexed_once_per_source_and_question(call):
    first = await call(
        "bridge_index_research",
        source="perplexity_ask",
        query="How do Postgres advisory locks work?",
        content=ANSWER,
        metadata={"model": "sonar-pro"},
    )
    again = await call(
        "bridge_index_research", source="perplexity_ask", query="How do Postgres advisory locks work?", content=ANSWER
    )

    data = first.structured_content
    assert (
        data["doc_id"].startswith("research-perplexity_ask-")
        and len(data["doc_id"]) == len("research-perplexity_ask-") + 12
    )
    assert data["action"] == "indexed" and data["chunks"] >= 1
    assert "Research Indexed" in text_of(first)
    assert f"**Doc ID:** {data['doc_id']}" in text_of(first)
    assert again.structured_content["doc_id"] == data["doc_id"]
    assert again.structured_content["action"] == "unchanged"
    assert "Research Unchanged" in text_of(again)


async def test_indexed_research_is_what_the_context_finds(call):
    done = await call("bridge_index_research", source="grok_search", query="advisory locks", content=ANSWER)

    context = await call("bridge_get_context", query="which lock is released at commit?")

    data = context.structured_content
    assert [e["doc_id"] for e in data["entries"]][:1] == [done.structured_content["doc_id"]]
    assert data["entries"][0]["doc_type"] == "research"
    text = text_of(context)
    assert text.startswith("**1 context entries** for 'which lock is released at commit?':")
    assert "[1] (research) [grok_search] advisory locks" in text


async def test_an_unknown_source_is_refused_with_the_known_ones(fail):
    text = await fail("bridge_index_research", source="bing", query="q", content="answer")

    assert "perplexity_ask" in text


async def test_an_imported_plan_is_worked_like_any_plan(call, root: Path, store):
    imported = await call(
        "bridge_import_plan",
        title="Move jobs to advisory locks",
        phases=["Spike", "Migrate the scheduler", "Drop the lock table"],
        status="draft",
    )
    plan_id = imported.structured_content["plan_id"]

    assert "Plan Imported" in text_of(imported)
    assert imported.structured_content["status"] == "draft"
    assert json.loads((root / imported.structured_content["mirror"]).read_text(encoding="utf-8"))["id"] == plan_id

    # The plan service (what dokoro_plan_check and dokoro_plan_status call) works it as a normal plan.
    checked = store.plans.check(1, plan_id=plan_id)
    status = store.plans.status(plan_id)
    context = await call("bridge_get_context", query="advisory locks scheduler")

    assert checked.plan.done == 1
    assert status is not None and "Spike" in [item.text for item in status.items]
    assert [p["plan_id"] for p in context.structured_content["plans"]] == [plan_id]
    assert "next: Migrate the scheduler" in text_of(context)


async def test_an_import_without_phases_is_refused(fail):
    text = await fail("bridge_import_plan", title="Empty", phases=[])

    assert "phases" in text


async def test_context_with_nothing_stored_says_how_to_fill_it(call):
    context = await call("bridge_get_context", query="anything at all")

    assert context.structured_content["entries"] == []
    assert "bridge_index_research" in text_of(context)


async def test_the_bridge_server_alone_serves_exactly_the_three_bridge_tools(tmp_path: Path):
    server = create_server(DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False), cwd=tmp_path)
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == {"bridge_index_research", "bridge_import_plan", "bridge_get_context"}
    assert tools["bridge_index_research"].annotations.destructive_hint
    assert tools["bridge_index_research"].output_schema["title"] == "ResearchIndexed"
    assert not tools["bridge_import_plan"].annotations.idempotent_hint
    assert not tools["bridge_get_context"].annotations.read_only_hint  # it brings the index in step first
