"""Task timers through the MCP client: per agent, on the database clock, pauses counted (§7.14)."""

from __future__ import annotations

import anyio
import pytest
from dokoro_store.clock import parse_iso

pytestmark = pytest.mark.anyio


async def test_pause_time_accumulates_and_is_never_active_time(call, root):
    started = await call("dokoro_task_track", action="start", title="Write the migration")
    task = started.structured_content["task"]
    assert (task["status"], task["iterations"], task["agent_id"]) == ("active", 1, "alice")

    await anyio.sleep(0.05)
    paused = await call("dokoro_task_track", action="pause", reason="lunch")
    assert paused.structured_content["task"]["status"] == "paused"
    await anyio.sleep(0.2)
    await call("dokoro_task_track", action="resume")
    await call("dokoro_task_track", action="pause")
    await anyio.sleep(0.1)
    await call("dokoro_task_track", action="resume")
    await call("dokoro_task_track", action="iterate")
    done = (await call("dokoro_task_track", action="complete")).structured_content["task"]

    assert done["status"] == "completed" and done["iterations"] == 2
    assert [p["reason"] for p in done["pauses"]] == ["lunch", "manual_pause"]
    pauses = [p["seconds"] for p in done["pauses"]]
    # §7.14: the original closed a manual pause when it began, so pause time never accumulated.
    assert pauses[0] >= 0.2 and pauses[1] >= 0.1
    assert done["pause_seconds"] == pytest.approx(sum(pauses), abs=0.002)
    assert done["active_seconds"] >= 0.05
    # The API speaks whole seconds; the store keeps the exact split (see the store's task timer tests).
    wall = (parse_iso(done["ended_at"]) - parse_iso(done["started_at"])).total_seconds()
    assert abs(done["active_seconds"] + done["pause_seconds"] - wall) <= 1.0
    assert done["duration_minutes"] == 0
    assert not (root / "current.md").exists()  # no workspace claimed: nothing logged, still tracked


async def test_two_agents_timers_never_mix(connect):
    async with connect("alice") as alice, connect("bob") as bob:
        a = await alice.call_tool("dokoro_task_track", {"action": "start", "title": "alice's task"})
        b = await bob.call_tool("dokoro_task_track", {"action": "start", "title": "bob's task"})
        assert not a.is_error and not b.is_error
        second = await alice.call_tool("dokoro_task_track", {"action": "start", "title": "alice's second"})
        auto = second.structured_content["auto_paused"]
        assert auto["title"] == "alice's task" and auto["status"] == "paused"

        bob_list = (await bob.call_tool("dokoro_task_list", {})).structured_content
        assert [t["title"] for t in bob_list["active"]] == ["bob's task"]  # alice's start paused only hers
        assert bob_list["paused"] == []
        alice_list = (await alice.call_tool("dokoro_task_list", {})).structured_content
        assert [t["title"] for t in alice_list["active"]] == ["alice's second"]
        assert [t["title"] for t in alice_list["paused"]] == ["alice's task"]

        foreign = await alice.call_tool(
            "dokoro_task_track", {"action": "complete", "task_id": b.structured_content["task"]["id"]}
        )
        assert foreign.is_error and "You have no task" in foreign.content[0].text


async def test_task_mistakes_are_error_results_that_say_what_to_do(call, fail):
    assert "needs a title" in await fail("dokoro_task_track", action="start")
    assert "you have no active task" in await fail("dokoro_task_track", action="pause")
    assert "you have no paused task" in await fail("dokoro_task_track", action="resume")
    assert "action" in await fail("dokoro_task_track", action="restart")
    await call("dokoro_task_track", action="start", title="x")
    await call("dokoro_task_track", action="abandon")
    listed = await call("dokoro_task_list")
    assert [t["title"] for t in listed.structured_content["abandoned"]] == ["x"]
    assert "### Abandoned (1)" in listed.content[0].text


async def test_a_task_change_is_logged_to_the_claimed_workspace(call, root):
    await call("dokoro_weekly_add_item", type="task", title="make the folder")  # any write creates the folder
    (root / "current.md").write_text("# Current Workspace\n\n## 📝 Progress\n", encoding="utf-8")
    tracked = await call("dokoro_task_track", action="start", title="Review the PR")
    assert tracked.structured_content["logged"] is True
    assert "TASK START: Review the PR" in (root / "current.md").read_text(encoding="utf-8")
