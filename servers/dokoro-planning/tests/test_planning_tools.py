"""Planning tools through the MCP client, answered from hybrid search and plans."""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro_planning.server import create_server
from dokoro_server import DokoroSettings
from mcp import Client

pytestmark = pytest.mark.anyio

REDIS = (
    "Redis pub/sub silently drops messages when a subscriber reconnects, so clients miss events. "
    "Redis Streams with consumer groups keep a backlog and survive reconnects."
)
BROKE = (
    "After upgrading the auth library to v5 the session refresh broke: users were logged out every five minutes. "
    "We reverted to v4 and pinned it until the token rotation bug is fixed upstream."
)


def _note(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def test_the_planning_server_serves_its_six_tools(store, root, tmp_path):
    server = create_server(DokoroSettings(path=root, auto_feedback=False), cwd=tmp_path, store=store)
    async with Client(server) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
    assert names == [
        "dokoro_capture_research",
        "dokoro_check_duplicate",
        "dokoro_detect_conflicts",
        "dokoro_plan_feature",
        "dokoro_regression_history",
        "dokoro_whats_next",
    ]


async def test_research_and_a_regression_note_are_found_by_meaning(call, root):
    """The scenario: research is captured and a regression postmortem is written to decisions/; later
    questions worded differently still find both, and each answer names its documents."""
    captured = await call("dokoro_capture_research", topic="Redis pub/sub for live updates", findings=REDIS)
    research_id = captured.structured_content["doc_id"]
    assert "Research Captured" in captured.content[0].text
    assert (root / captured.structured_content["path"]).exists()
    _note(root, "decisions/2026-05-02-session-refresh-regression.md", f"# Session refresh regression\n\n{BROKE}\n")

    conflicts = await call("dokoro_detect_conflicts", feature="broadcast messages to subscribers")
    found = {c["doc_id"]: c for c in conflicts.structured_content["conflicts"]}
    assert research_id in found
    assert "semantic neighbour" in found[research_id]["why"]
    assert f"`{research_id}`" in conflicts.content[0].text  # the answer names its source

    history = await call("dokoro_regression_history", component="people getting kicked out of their accounts")
    regressions = history.structured_content["regressions"]
    assert [r["doc_id"] for r in regressions] == ["2026-05-02-session-refresh-regression"]
    assert regressions[0]["why"].startswith("semantic neighbour")  # no word of the question is in the note
    assert regressions[0]["excerpt"].startswith("After upgrading the auth library to v5 the session refresh broke")
    assert "Sources: `2026-05-02-session-refresh-regression`" in history.content[0].text
    assert "2026-06-10 — **Session refresh regression** (`decisions/" in history.content[0].text
    # The research note records no breakage: it is a constraint, not a regression.
    assert research_id not in [r["doc_id"] for r in regressions]


async def test_nothing_related_means_no_conflicts_and_no_regressions(call, root):
    _note(root, "decisions/pasta.md", "# Pasta\n\nBoil water, add salt, cook the spaghetti nine minutes.\n")

    conflicts = await call("dokoro_detect_conflicts", feature="rate limiting for the public API")
    assert "No Conflicts" in conflicts.content[0].text
    assert conflicts.structured_content["conflicts"] == []
    history = await call("dokoro_regression_history", component="rate limiter")
    assert "No Regressions Found" in history.content[0].text


async def test_check_duplicate_flags_finished_features(call, root):
    _note(
        root,
        "features/csv-export.md",
        "---\ntitle: CSV export\nstatus: done\n---\n# CSV export\n\n"
        "Implemented: users download their reports as CSV.\n",
    )

    found = await call("dokoro_check_duplicate", description="let people download reports as spreadsheets")

    assert "Possible Duplicate" in found.content[0].text
    assert [s["doc_id"] for s in found.structured_content["finished"]] == ["csv-export"]
    assert "Sources: `csv-export`" in found.content[0].text
    empty = await call("dokoro_check_duplicate", description="a quantum flux capacitor")
    assert "No Duplicates" in empty.content[0].text


async def test_whats_next_reads_plans_blockers_and_research(call, store):
    # The plan and question services (what the core server's plan and question tools call) write them.
    plan = store.plans.create("Live updates", ["pick a transport", "fan out events"])
    store.plans.check(1, plan_id=plan.id)
    store.plans.add_blocker(2, "waiting for the infra budget", plan_id=plan.id)
    store.working.questions.add("Which broker do we run?", priority="blocker")
    captured = await call("dokoro_capture_research", topic="Redis pub/sub", findings=REDIS)

    done = await call("dokoro_whats_next", context="real-time events for subscribers")

    text = done.content[0].text
    assert "“Live updates” (50%): next is 2. fan out events" in text
    assert "Unblock “fan out events” in “Live updates”: waiting for the infra budget" in text
    assert "Answer the blocking question: Which broker do we run?" in text
    assert captured.structured_content["doc_id"] in text
    assert "Sources:" in text and "plan `plan-2026-06-10-22h23-wednesday-live-updates`" in text
    kinds = {s["kind"] for s in done.structured_content["suggestions"]}
    assert {"plan", "blocker", "question", "research"} <= kinds


async def test_plan_feature_writes_a_plan_citing_what_it_used(call, root):
    captured = await call("dokoro_capture_research", topic="Redis pub/sub for live updates", findings=REDIS)

    planned = await call("dokoro_plan_feature", feature="broadcast messages to subscribers")

    text = planned.content[0].text
    assert text.startswith("# Plan: broadcast messages to subscribers")
    assert "## Existing Research" in text
    assert captured.structured_content["doc_id"] in text
    assert "## Implementation Steps" in text
    path = planned.structured_content["path"]
    assert f"📄 Saved to: {path}" in text
    assert (root / path).exists()
    assert [s["doc_id"] for s in planned.structured_content["research"]] == [captured.structured_content["doc_id"]]

    listed = await call("dokoro_plan_feature", feature="broadcast messages to subscribers", approach="use_docs")
    assert "## Documents To Review" in listed.content[0].text


async def test_bad_planning_calls_fail_with_a_fix(fail):
    assert "feature must not be empty" in await fail("dokoro_detect_conflicts", feature="  ")
    assert "component must not be empty" in await fail("dokoro_regression_history", component="")
    assert "findings must not be empty" in await fail("dokoro_capture_research", topic="t", findings=" ")
    await fail("dokoro_plan_feature", feature="x", approach="guess")
