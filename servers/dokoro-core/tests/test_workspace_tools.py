"""dokoro_init, dokoro_workspace_claim/status/dump and dokoro_session_log through an MCP client."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from dokoro_store.models import Doc
from dokoro_store.walls import frontmatter as fm

pytestmark = pytest.mark.anyio

SLUG = "2026-06-10-22h23-wednesday"
AGENT = "agent-260610222315"
# Dumps also write a docs row: those tests run on SQLite and on PostgreSQL.
BOTH_BACKENDS = pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)


# ---------------------------------------------------------------------------------------------- init


async def test_init_lays_out_the_served_folder_by_default(call, root):
    outcome = await call("dokoro_init")

    assert outcome.structured_content["path"] == "dokoro"  # relative to the project served
    assert outcome.structured_content["created"] is True
    assert "daily" in outcome.structured_content["folders"]
    assert "Dokoro Initialized" in outcome.content[0].text
    for folder in ("daily", "decisions", "insights", "research", "retrospective/weekly", "archive", ".mcp"):
        assert (root / folder).is_dir(), folder
    assert (root / "README.md").is_file()
    assert (root / ".gitignore").is_file()
    assert (root / ".config" / "search-mode").read_text().strip() == "auto"
    front, body = fm.parse((root / "current.md").read_text())
    assert front["agent_id"] == "agent-initial"
    assert "## 🎯 Today's Focus" in body


async def test_init_leaves_an_existing_folder_alone_when_asked_to_skip(call, root):
    await call("dokoro_init")
    (root / "README.md").write_text("my notes")

    outcome = await call("dokoro_init")

    assert outcome.structured_content["created"] is False
    assert "Already Exists" in outcome.content[0].text
    assert (root / "README.md").read_text() == "my notes"


async def test_init_without_skip_restores_missing_folders_and_keeps_edited_files(call, root):
    await call("dokoro_init")
    (root / "insights").rmdir()
    (root / "README.md").write_text("my notes")

    outcome = await call("dokoro_init", skipIfExists=False)

    assert outcome.structured_content["created"] is True
    assert (root / "insights").is_dir()
    assert (root / "README.md").read_text() == "my notes"


async def test_init_with_a_project_path_creates_a_dokoro_folder_inside_it(call, tmp_path, root):
    project = tmp_path / "elsewhere"

    outcome = await call("dokoro_init", projectPath=str(project))

    assert outcome.structured_content["path"] == "elsewhere/dokoro"
    assert (project / "dokoro" / "README.md").is_file()
    assert not (root / "README.md").exists()


async def test_init_resolves_a_relative_project_path_against_the_served_cwd(call, cwd):
    outcome = await call("dokoro_init", projectPath="relative-project")

    assert outcome.structured_content["path"] == "relative-project/dokoro"
    assert (cwd / "relative-project" / "dokoro" / "README.md").is_file()


# ---------------------------------------------------------------------------------------------- claim


async def test_claim_writes_current_md_the_lock_and_session_metadata(call, root, read_current, read_json):
    outcome = await call("dokoro_workspace_claim", task="fix login")

    data = outcome.structured_content
    assert data["agent_id"] == AGENT
    assert data["session_id"] == f"session-2026-06-10T22-23-15-000Z-{AGENT}"
    assert data["task"] == "fix login"
    assert data["lock_expires_at"] == "2026-06-10T22:53:15Z"
    assert data["took_over_from"] is None
    text = outcome.content[0].text
    assert "Workspace Claimed" in text
    assert AGENT in text
    assert "fix login" in text
    assert "expires in 30 minutes" in text

    front, body = read_current()
    assert front["agent_id"] == AGENT
    assert front["session_id"] == data["session_id"]
    assert front["task"] == "fix login"
    assert front["session_start"] == "2026-06-10T22:23:15Z"
    assert "## 🎯 Active Task\nfix login" in body
    assert "🚀 [22:23:15] Session claimed: fix login" in body

    lock = read_json(".mcp/workspace.lock")
    assert lock["agent_id"] == AGENT
    assert lock["expires_at"] == "2026-06-10T22:53:15Z"
    session = read_json(".mcp/session.json")
    assert session["session"]["id"] == data["session_id"]
    assert session["session"]["end"] is None


async def test_claim_writes_its_tags_to_the_front_matter(call, read_current):
    await call("dokoro_workspace_claim", task="fix login", tags={"area": ["auth", "ui"], "ticket": 42})

    front, _ = read_current()
    assert front["tags"] == {"area": ["auth", "ui"], "ticket": 42}


async def test_a_claim_with_an_empty_task_is_refused_and_writes_nothing(fail, root, snapshot):
    before = snapshot()

    message = await fail("dokoro_workspace_claim", task="   ")

    assert "task must not be empty" in message
    assert snapshot() == before
    assert not (root / ".mcp" / "workspace.lock").exists()


async def test_a_second_claim_is_refused_while_the_lock_is_live(call, make_client, snapshot, read_json):
    await call("dokoro_workspace_claim", task="fix login")
    before = snapshot()

    async with make_client() as other:
        outcome = await other.call_tool("dokoro_workspace_claim", {"task": "refactor billing"})

    assert outcome.is_error
    message = outcome.content[0].text
    assert f"locked by {AGENT}" in message
    assert "Expires in 30 minutes" in message
    assert "force=true" in message
    assert snapshot() == before
    assert read_json(".mcp/workspace.lock")["agent_id"] == AGENT


async def test_force_takes_over_a_live_lock(call, make_client, read_current, read_json):
    await call("dokoro_workspace_claim", task="fix login")

    async with make_client() as other:
        outcome = await other.call_tool("dokoro_workspace_claim", {"task": "refactor billing", "force": True})

    assert not outcome.is_error
    assert outcome.structured_content["took_over_from"] == AGENT
    assert f"Took over from:** {AGENT}" in outcome.content[0].text
    new_agent = outcome.structured_content["agent_id"]
    assert new_agent == f"{AGENT}-2"  # same second as the first claim: the id gets a counter
    assert read_json(".mcp/workspace.lock")["agent_id"] == new_agent
    assert read_current()[0]["task"] == "refactor billing"


async def test_a_lock_silent_for_more_than_an_hour_is_taken_over_without_force(call, clock, make_client):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=61))

    async with make_client() as other:
        outcome = await other.call_tool("dokoro_workspace_claim", {"task": "refactor billing"})

    assert not outcome.is_error, outcome.content[0].text
    assert outcome.structured_content["took_over_from"] == AGENT
    assert outcome.structured_content["agent_id"] == "agent-260610232415"


async def test_a_lock_without_a_heartbeat_for_an_hour_is_stale_even_before_it_expires(call, clock, root):
    stale_heartbeat = clock.now() - timedelta(minutes=61)
    (root / ".mcp").mkdir(parents=True)
    (root / ".mcp" / "workspace.lock").write_text(
        json.dumps(
            {
                "agent_id": "agent-ghost",
                "session_id": "session-ghost",
                "acquired_at": "2026-06-10T21:00:00Z",
                "expires_at": "2026-06-20T00:00:00Z",
                "last_heartbeat": f"{stale_heartbeat:%Y-%m-%dT%H:%M:%SZ}",
                "pid": 1,
            }
        )
    )

    outcome = await call("dokoro_workspace_claim", task="fix login")

    assert outcome.structured_content["took_over_from"] == "agent-ghost"


async def test_an_unreadable_lock_counts_as_held(fail, call, root):
    (root / ".mcp").mkdir(parents=True)
    (root / ".mcp" / "workspace.lock").write_text("{not json")

    message = await fail("dokoro_workspace_claim", task="fix login")
    assert "locked by unknown" in message

    outcome = await call("dokoro_workspace_claim", task="fix login", force=True)
    assert outcome.structured_content["took_over_from"] == "unknown"


async def test_tool_activity_renews_the_lock_past_its_first_expiry(call, clock, make_client, read_json):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=25))
    await call("dokoro_session_log", entry="still here")
    clock.advance(timedelta(minutes=10))  # 35 minutes after the claim: past the first expiry

    async with make_client() as other:
        outcome = await other.call_tool("dokoro_workspace_claim", {"task": "refactor billing"})

    assert outcome.is_error
    assert f"locked by {AGENT}" in outcome.content[0].text
    lock = read_json(".mcp/workspace.lock")
    assert lock["last_heartbeat"] == "2026-06-10T22:48:15Z"
    assert lock["expires_at"] == "2026-06-10T23:18:15Z"


# ---------------------------------------------------------------------------------------------- status


async def test_status_without_a_workspace_says_how_to_start(call):
    outcome = await call("dokoro_workspace_status")

    assert outcome.structured_content["active"] is False
    assert outcome.structured_content["locked"] is False
    assert "No Workspace" in outcome.content[0].text
    assert "dokoro_workspace_claim" in outcome.content[0].text


async def test_status_reports_a_lock_left_without_a_workspace(call, root):
    await call("dokoro_workspace_claim", task="fix login")
    (root / "current.md").unlink()

    outcome = await call("dokoro_workspace_status")

    assert outcome.structured_content["active"] is False
    assert outcome.structured_content["locked_by"] == AGENT
    assert "No Active Workspace" in outcome.content[0].text
    assert f"Found existing lock by {AGENT}" in outcome.content[0].text


async def test_status_shows_the_claimed_task_lock_and_entries(call):
    await call("dokoro_workspace_claim", task="fix login")
    await call("dokoro_session_log", entry="found the bug")

    outcome = await call("dokoro_workspace_status")

    data = outcome.structured_content
    assert data["active"] is True
    assert data["task"] == "fix login"
    assert data["agent_id"] == AGENT
    assert data["locked"] is True
    assert data["locked_by"] == AGENT
    assert data["lock_stale"] is False
    assert data["session_start"] == "2026-06-10T22:23:15Z"
    assert data["entries"] == 2  # the claim line and one log line
    assert data["tool_calls"] == 2  # the claim and the log; status counts after it answers
    text = outcome.content[0].text
    assert "Workspace Status" in text
    assert f"locked by {AGENT} until 2026-06-10T22:53:15Z" in text


async def test_status_flags_a_lock_left_silent_for_more_than_an_hour_as_stale(call, clock):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=61))

    outcome = await call("dokoro_workspace_status")

    assert outcome.structured_content["lock_stale"] is True
    assert outcome.structured_content["locked"] is False
    assert outcome.structured_content["session_minutes"] == 61
    assert "(stale)" in outcome.content[0].text


async def test_active_minutes_accrue_between_tool_calls_close_together(call, clock):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=2))
    await call("dokoro_session_log", entry="one")
    clock.advance(timedelta(minutes=3))
    await call("dokoro_session_log", entry="two")

    outcome = await call("dokoro_workspace_status")

    assert outcome.structured_content["active_minutes"] == 5
    assert outcome.structured_content["session_minutes"] == 5
    assert "Active time:** 5m" in outcome.content[0].text


async def test_a_silence_of_more_than_five_minutes_is_recorded_as_an_auto_inactive_pause(call, clock, read_json):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=2))
    await call("dokoro_session_log", entry="one")
    clock.advance(timedelta(minutes=7))
    await call("dokoro_session_log", entry="two")

    timing = read_json(".mcp/session.json")["timing"]
    assert timing["active_minutes"] == 2
    assert timing["pause_minutes"] == 7
    assert timing["pauses"] == [
        {"start": "2026-06-10T22:25:15Z", "end": "2026-06-10T22:32:15Z", "reason": "auto_inactive"}
    ]
    outcome = await call("dokoro_workspace_status")
    assert outcome.structured_content["active_minutes"] == 2
    assert outcome.structured_content["session_minutes"] == 9


async def test_another_agents_calls_neither_renew_the_lock_nor_count_toward_the_session(
    call, clock, make_client, read_json
):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=20))

    async with make_client() as other:
        refused = await other.call_tool("dokoro_workspace_claim", {"task": "refactor billing"})
        await other.call_tool("dokoro_workspace_status", {})

    assert refused.is_error
    assert read_json(".mcp/workspace.lock")["expires_at"] == "2026-06-10T22:53:15Z"
    assert read_json(".mcp/session.json")["tool_usage"] == {"dokoro_workspace_claim": 1}


async def test_tool_calls_are_counted_by_tool_and_activity(call, read_json):
    await call("dokoro_workspace_claim", task="fix login")
    await call("dokoro_session_log", entry="one")
    await call("dokoro_session_log", entry="two")

    meta = read_json(".mcp/session.json")
    assert meta["tool_usage"] == {"dokoro_workspace_claim": 1, "dokoro_session_log": 2}
    assert sum(meta["activity_breakdown"].values()) == 3


# ---------------------------------------------------------------------------------------------- log


async def test_log_appends_a_timestamped_line_with_the_icon_of_its_type(call, clock, read_current):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(seconds=42))

    outcome = await call("dokoro_session_log", entry="use a refresh lock", type="decision")

    assert outcome.structured_content == {"type": "decision", "time": "2026-06-10T22:23:57Z", "redacted": []}
    assert "Entry Logged" in outcome.content[0].text
    assert "22:23:57" in outcome.content[0].text
    assert "\n🎯 [22:23:57] use a refresh lock\n" in read_current()[1]


async def test_log_defaults_to_progress(call, read_current):
    await call("dokoro_workspace_claim", task="fix login")

    outcome = await call("dokoro_session_log", entry="wrote the test")

    assert outcome.structured_content["type"] == "progress"
    assert "📝 [22:23:15] wrote the test" in read_current()[1]


async def test_logging_without_a_claimed_workspace_names_the_claim_tool(fail, snapshot):
    before = snapshot()

    message = await fail("dokoro_session_log", entry="hello")

    assert "dokoro_workspace_claim" in message
    assert snapshot() == before


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"entry": "x", "type": "rant"}, "'progress', 'note', 'issue' or 'decision'"),
        ({"entry": "   "}, "entry must not be empty"),
        ({}, "entry"),
    ],
)
async def test_log_rejects_bad_arguments_and_writes_nothing(call, fail, snapshot, arguments, hint):
    await call("dokoro_workspace_claim", task="fix login")
    before = snapshot()

    message = await fail("dokoro_session_log", **arguments)

    assert hint in message
    assert snapshot() == before


# ---------------------------------------------------------------------------------------------- dump


@BOTH_BACKENDS
async def test_dump_keeping_the_workspace_links_the_daily_file_and_keeps_the_lock(
    call, root, store, read_current, read_json
):
    await call("dokoro_workspace_claim", task="fix login")
    await call("dokoro_session_log", entry="found the race")

    outcome = await call("dokoro_workspace_dump", reason="checkpoint")

    name = f"{SLUG}-session-fix-login.md"
    data = outcome.structured_content
    assert data["relative"] == f"daily/{name}"
    assert data["path"] == f"dokoro/daily/{name}"  # relative to the project served
    assert data["doc_id"] == name.removesuffix(".md")
    assert data["status"] == "active"
    assert data["doc_type"] == "session"
    assert data["released"] is False
    assert data["doc_indexed"] is True
    text = outcome.content[0].text
    assert "Saved to Dokoro" in text
    assert data["path"] in text
    assert "Status:** ACTIVE" in text
    assert "kept active" in text

    _, body = read_current()
    assert f"## 📝 Progress\nSession dumped to: [{name}](daily/{name})\n" in body
    assert "found the race" in body
    assert read_json(".mcp/workspace.lock")["agent_id"] == AGENT
    assert read_json(".mcp/session.json")["session"]["end"] is None

    dumped = (root / "daily" / name).read_text()
    front, dump_body = fm.parse(dumped)
    assert front["title"] == "Session: fix login"
    assert front["dump_reason"] == "checkpoint"
    assert front["agent_id"] == AGENT
    assert front["docType"] == "session"
    assert "# Session: fix login" in dump_body
    assert "**Date:** 2026-06-10 (Wednesday)" in dump_body
    assert "## Workspace Content at Time of Dump" in dump_body
    assert "found the race" in dump_body
    assert "## 📊 Session Analytics" in dump_body

    with store.db.read() as session:
        doc = session.get(Doc, data["doc_id"])
    assert doc is not None
    assert doc.filepath == f"daily/{name}"
    assert doc.title == "Session: fix login"
    assert doc.doc_type == "session"
    assert doc.status == "active"
    assert doc.content == dumped


@BOTH_BACKENDS
async def test_dump_ending_the_session_releases_the_lock_and_removes_current_md(
    call, clock, root, store, read_json, make_client
):
    await call("dokoro_workspace_claim", task="fix login")
    clock.advance(timedelta(minutes=90))

    outcome = await call("dokoro_workspace_dump", reason="done for today", keepActive=False, status="done")

    data = outcome.structured_content
    assert data["released"] is True
    assert data["duration_minutes"] == 90
    assert data["status"] == "done"
    assert "Duration:** 1h 30m" in outcome.content[0].text
    assert "released" in outcome.content[0].text
    assert not (root / "current.md").exists()
    assert not (root / ".mcp" / "workspace.lock").exists()
    assert read_json(".mcp/session.json")["session"]["end"] == "2026-06-10T23:53:15Z"

    name = "2026-06-10-23h53-wednesday-session-fix-login.md"
    assert data["relative"] == f"daily/{name}"
    front, _ = fm.parse((root / "daily" / name).read_text())
    assert front["session_start"] == "2026-06-10T22:23:15Z"
    assert front["session_end"] == "2026-06-10T23:53:15Z"
    assert front["duration_minutes"] == 90
    assert front["duration_hours"] == 1.5
    assert front["status"] == "done"
    assert front["tags"]["duration"] == "1h 30m"
    with store.db.read() as session:
        doc = session.get(Doc, data["doc_id"])
    assert doc is not None
    assert doc.status == "done"

    status = await call("dokoro_workspace_status")
    assert status.structured_content["active"] is False
    async with make_client() as other:  # the next agent needs no force
        claimed = await other.call_tool("dokoro_workspace_claim", {"task": "next thing"})
    assert not claimed.is_error


@BOTH_BACKENDS
async def test_two_dumps_in_the_same_minute_do_not_overwrite_each_other(call, root, store):
    await call("dokoro_workspace_claim", task="fix login")

    first = await call("dokoro_workspace_dump", reason="first")
    second = await call("dokoro_workspace_dump", reason="second", docType="note")

    assert first.structured_content["relative"] == f"daily/{SLUG}-session-fix-login.md"
    assert second.structured_content["relative"] == f"daily/{SLUG}-session-fix-login-2.md"
    assert "Reason:** first" in (root / first.structured_content["relative"]).read_text()
    assert "Reason:** second" in (root / second.structured_content["relative"]).read_text()
    with store.db.read() as session:
        assert session.get(Doc, first.structured_content["doc_id"]).doc_type == "session"
        assert session.get(Doc, second.structured_content["doc_id"]).doc_type == "note"


async def test_a_dump_the_database_cannot_index_still_saves_and_ends_the_session(call, root, store):
    await call("dokoro_workspace_claim", task="fix login")
    with store.db.engine.begin() as connection:  # the database breaks between claim and dump
        connection.exec_driver_sql("DROP TABLE docs")

    outcome = await call("dokoro_workspace_dump", reason="end", keepActive=False)

    assert outcome.structured_content["doc_indexed"] is False
    assert outcome.structured_content["released"] is True
    assert "Indexed:** no" in outcome.content[0].text
    assert (root / outcome.structured_content["relative"]).is_file()
    assert not (root / "current.md").exists()


async def test_the_dump_topic_is_the_task_slugged_and_cut_to_thirty_characters(call):
    await call("dokoro_workspace_claim", task="Fix: the LOGIN page & session-refresh race!!")

    outcome = await call("dokoro_workspace_dump", reason="checkpoint")

    assert outcome.structured_content["relative"] == f"daily/{SLUG}-session-fix-the-login-page-session-ref.md"


async def test_dumping_without_a_workspace_names_the_claim_tool(fail, root, snapshot):
    before = snapshot()

    message = await fail("dokoro_workspace_dump", reason="end")

    assert "Nothing to dump" in message
    assert "dokoro_workspace_claim" in message
    assert snapshot() == before
    assert not (root / "daily").exists()


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"reason": "end", "status": "finished"}, "'active', 'pending', 'backlog', 'done', 'paused' or 'blocked'"),
        ({"reason": "end", "docType": "memo"}, "'issue', 'prd', 'research', 'decision', 'note', 'session' or 'plan'"),
        ({"reason": "  "}, "reason must not be empty"),
        ({"reason": "end", "keepActive": "maybe"}, "valid boolean"),
    ],
)
async def test_dump_rejects_bad_arguments_and_writes_nothing(call, fail, root, snapshot, store, arguments, hint):
    await call("dokoro_workspace_claim", task="fix login")
    before = snapshot()

    message = await fail("dokoro_workspace_dump", **arguments)

    assert hint in message
    assert snapshot() == before
    assert not (root / "daily").exists()
    with store.db.read() as session:
        assert session.get(Doc, f"{SLUG}-session-fix-login") is None
