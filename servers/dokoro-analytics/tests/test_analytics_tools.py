"""Analytics tools through the MCP client, on SQLite and PostgreSQL, answered from the store's rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from dokoro_analytics.server import create_server
from dokoro_server import DokoroSettings
from mcp import Client

pytestmark = pytest.mark.anyio

ANALYTICS_TOOLS = {
    *("dokoro_feature_status", "dokoro_pending", "dokoro_velocity_insights", "dokoro_timeline"),
    *("dokoro_test_checklist", "dokoro_compress_week", "dokoro_task_track", "dokoro_task_list"),
}


async def test_the_analytics_server_serves_its_eight_tools(tmp_path):
    server = create_server(DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False), cwd=tmp_path)
    async with Client(server) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
    assert names == sorted(ANALYTICS_TOOLS)


async def test_feature_status_comes_from_the_tracked_item_then_from_documents(call, store, root):
    feature = store.tracking.add_feature("Dark mode for the dashboard").item.id
    store.tracking.start_feature(feature)
    tracked = await call("dokoro_feature_status", feature="dashboard dark mode")
    assert tracked.structured_content["status"] == "in_progress"
    assert tracked.structured_content["basis"].startswith(f"tracking feature {feature} is active")
    assert tracked.structured_content["matches"][0]["id"] == feature

    nothing = await call("dokoro_feature_status", feature="quantum teleportation")
    assert nothing.structured_content["status"] == "unknown"
    assert nothing.structured_content["basis"] == "no tracked item, plan or document matches"

    notes = root / "features" / "export-notes.md"
    notes.parent.mkdir(parents=True, exist_ok=True)
    notes.write_text("# CSV export\n\n- ✅ CSV export shipped in 2.3\n- 🚧 Excel export\n", encoding="utf-8")
    documented = await call("dokoro_feature_status", feature="CSV export")
    assert documented.structured_content["status"] == "completed"
    assert documented.structured_content["basis"] == (
        "no tracked item matches; markers in the closest document features/export-notes.md"
    )
    markers = documented.structured_content["documents"][0]["markers"]
    assert markers == ["- ✅ CSV export shipped in 2.3", "- 🚧 Excel export"]


async def test_pending_lists_open_work_by_how_long_it_has_not_moved(call, store, clock):
    store.tracking.add_issue("Old bug")
    store.tracking.week.add_item("task", "Old week item")
    store.plans.create("Old plan", ["first step", "second step"])
    clock.advance(timedelta(days=10))
    store.tracking.add_feature("Fresh idea")
    store.tracking.track_task("start", "alice", title="running now")

    everything = await call("dokoro_pending")
    sources = everything.structured_content["counts"]
    assert sources == {"issue": 1, "weekly": 1, "plan": 1, "feature": 1, "task": 1}
    ages = {i["title"]: i["age_days"] for i in everything.structured_content["items"]}
    assert ages["Old bug"] == 10.0 and ages["Fresh idea"] == 0.0
    assert everything.structured_content["items"][0]["age_days"] == 10.0  # oldest first
    plan = next(i for i in everything.structured_content["items"] if i["source"] == "plan")
    assert plan["detail"] == "2 unchecked item(s), next: first step"
    assert "age = days since the row or document last changed" in everything.structured_content["counted"]

    stale = await call("dokoro_pending", staleness="stale")
    assert {i["title"] for i in stale.structured_content["items"]} == {"Old bug", "Old week item", "Old plan"}
    very = await call("dokoro_pending", staleness="very_stale")
    assert very.structured_content["items"] == []
    assert "Nothing pending." in very.content[0].text


async def test_velocity_counts_what_each_layer_recorded_and_says_what_it_counts(call, store, clock):
    clock.set(datetime.now(UTC))  # task timers and feedback run on the database clock: be in its week
    issue = store.tracking.add_issue("Counted bug").item.id
    store.tracking.complete_issue(issue, "fixed")
    store.tracking.add_issue("Still open")
    store.tracking.week.add_item("task", "Tick me")
    week_item = store.tracking.weekly.all()[0]
    store.tracking.weekly._update(week_item.id, status="done")
    store.plans.create("A plan", ["one", "two"])
    store.plans.check(1)
    store.episodic.add_summary("s-1", "model", "Did things")
    store.tracking.track_task("start", "alice", title="timed")
    store.tracking.track_task("complete", "alice")
    store.feedback.record("alice", "dokoro_issue_add", "success")
    store.feedback.record("alice", "dokoro_issue_add", "failure")
    clock.set(datetime.now(UTC) + timedelta(minutes=1))  # the database clock has moved on meanwhile

    velocity = await call("dokoro_velocity_insights", period="week")
    figures = {f["name"]: f["value"] for f in velocity.structured_content["figures"]}
    assert figures["issues opened"] == 2 and figures["issues resolved"] == 1
    assert figures["weekly items done"] == 1 and figures["tasks completed"] == 1
    assert figures["plans created"] == 1 and figures["plan items checked"] == 1
    assert figures["session summaries"] == 1
    assert figures["tool calls"] == 2 and figures["tool success rate"] == 50.0
    assert velocity.structured_content["completed"] == 4  # resolved + week item + task + plan item
    assert velocity.structured_content["average_per_day"] == round(4 / 7, 2)
    counts = {f["name"]: f["counts"] for f in velocity.structured_content["figures"]}
    assert counts["tracked hours"].startswith("active time of the task timers completed")
    assert "— issues added (tracking rows)" in velocity.content[0].text


async def test_the_timeline_is_oldest_first_grouped_by_day_and_speaks_json(call, store, clock):
    issue = store.tracking.add_issue("First thing").item.id
    clock.advance(timedelta(days=1))
    store.tracking.complete_issue(issue, "done")
    clock.advance(timedelta(days=1))
    store.plans.create("Later plan", ["x"])

    text = await call("dokoro_timeline", range="week")
    entries = text.structured_content["entries"]
    steps = [(e["source"], e["action"]) for e in entries]
    assert steps == [("issue", "added"), ("issue", "resolved"), ("plan", "created")]
    assert [e["date"] for e in entries] == ["2026-06-10", "2026-06-11", "2026-06-12"]
    assert "### 2026-06-11\n- 22:23 [issue] resolved: First thing" in text.content[0].text
    as_json = await call("dokoro_timeline", range="all", format="json")
    assert [e["title"] for e in json.loads(as_json.content[0].text)] == ["First thing", "First thing", "Later plan"]
    clock.advance(timedelta(days=40))
    assert (await call("dokoro_timeline", range="month")).structured_content["entries"] == []


async def test_pending_velocity_and_timeline_read_the_markdown_the_agent_wrote(call, root, clock):
    """The original read the markdown: a "TODO:" in an insight is pending, two dailies written the
    same minute are two entries of the timeline, and velocity counts the documents written."""
    (root / "insights").mkdir(parents=True, exist_ok=True)
    (root / "daily").mkdir(parents=True, exist_ok=True)
    (root / "insights" / "auth-research.md").write_text(
        "# Auth research\n\nTODO: rotate the signing key before the release.\n"
        "- ✅ todo list cleaned up\n- 🚧 move sessions to Redis\n",
        encoding="utf-8",
    )
    (root / "insights" / "mastodon.md").write_text("# Mastodon\n\nWe post releases on Mastodon.\n", "utf-8")
    for task in ("login-fix", "cache-fix"):
        (root / "daily" / f"2026-06-10-22h23-wednesday-session-{task}.md").write_text(
            f"# Session {task}\n\nDid the {task}.\n", encoding="utf-8"
        )

    timeline = await call("dokoro_timeline", range="week")
    velocity = await call("dokoro_velocity_insights", period="week")
    clock.advance(timedelta(days=8))
    pending = await call("dokoro_pending", staleness="stale")

    documents = [e for e in timeline.structured_content["entries"] if e["source"] == "document"]
    assert sorted(e["ref"] for e in documents) == [
        "daily/2026-06-10-22h23-wednesday-session-cache-fix.md",
        "daily/2026-06-10-22h23-wednesday-session-login-fix.md",
        "insights/auth-research.md",
        "insights/mastodon.md",
    ]
    assert {e["action"] for e in documents} == {"written"}
    assert "[document] written: Session login-fix" in timeline.content[0].text
    figures = {f["name"]: f for f in velocity.structured_content["figures"]}
    assert figures["documents written"]["value"] == 4
    assert figures["documents written"]["counts"].endswith("daily 2, insights 2")
    [item] = [i for i in pending.structured_content["items"] if i["source"] == "document"]
    assert (item["id"], item["title"], item["age_days"]) == ("insights/auth-research.md", "Auth research", 8.0)
    assert item["detail"] == (
        "2 pending mark(s): TODO: rotate the signing key before the release. | - 🚧 move sessions to Redis"
    )
    assert "[document] **Auth research** `insights/auth-research.md`" in pending.content[0].text


async def test_a_test_checklist_adds_fixed_bugs_and_what_broke_before(call, store, root):
    bug = store.tracking.add_issue("Upload fails for large files", description="Upload of 2 GB files times out").item.id
    store.tracking.complete_issue(bug, "Stream the upload in chunks")
    note = root / "decisions" / "upload-regression.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(
        "# Upload regression\n\nThe upload broke after the proxy change: memory leak on retries.\n", encoding="utf-8"
    )

    checklist = await call("dokoro_test_checklist", feature="file upload", format="detailed")
    items = checklist.structured_content["items"]
    assert [i["kind"] for i in items[:5]] == ["standard"] * 5
    regressions = [i for i in items if i["kind"] == "regression"]
    assert regressions[0]["source"] == bug and "Stream the upload in chunks" in regressions[0]["text"]
    assert any(i["source"] == "decisions/upload-regression.md" for i in regressions)
    assert any(i["text"] == "Memory use stays bounded under load" for i in regressions)
    assert "- [ ] Regression: “Upload fails for large files” stays fixed" in checklist.content[0].text
    as_json = await call("dokoro_test_checklist", feature="file upload", format="json")
    assert len(json.loads(as_json.content[0].text)) == len(items)


async def test_bad_analytics_arguments_are_error_results(fail):
    assert "feature must not be empty" in await fail("dokoro_feature_status", feature=" ")
    assert "period" in await fail("dokoro_velocity_insights", period="year")
    no_such_week = await fail("dokoro_compress_week", weekNumber=53, year=2025)
    assert "week 53 does not exist in ISO week-year 2025" in no_such_week
    assert "weekNumber" in await fail("dokoro_compress_week", weekNumber=0)
    assert "format" in await fail("dokoro_test_checklist", feature="x", format="yaml")
