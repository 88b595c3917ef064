"""The archive sweep through the MCP client: what moves, what is protected, the lock, dry runs,
the status file, and the sweep a workspace claim runs."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio

# The frozen clock stands at Wednesday 2026-06-10 22:23:15Z (ISO week 2026-W24).
OLD = "2026-06-01-09h00-monday-session-old.md"  # W23
OTHER_OLD = "2026-05-20-09h00-wednesday-session-older.md"  # W21
THIS_WEEK = "2026-06-08-09h00-monday-session-this-week.md"  # W24


def _daily(root: Path, *names: str) -> None:
    (root / "daily").mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / "daily" / name).write_text(f"# {name}\n", encoding="utf-8")


def _lock(root: Path, started_at: str) -> Path:
    lock = root / ".mcp" / "archive.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": 4242, "started_at": started_at}), encoding="utf-8")
    return lock


async def test_old_daily_files_move_and_the_current_week_stays(call, root, read_json):
    _daily(root, OLD, OTHER_OLD, THIS_WEEK)

    swept = await call("dokoro_archive_sweep", olderThanDays=0)

    text = swept.content[0].text
    assert text.startswith("## 🧹 Workspace Sweep\n")
    assert f"- daily/{OLD} → archive/daily/2026-W23/{OLD}" in text
    assert f"- daily/{OTHER_OLD} → archive/daily/2026-W21/{OTHER_OLD}" in text
    assert f"- kept daily/{THIS_WEEK} (current week)" in text
    assert (root / "daily" / THIS_WEEK).exists()
    assert (root / "archive" / "daily" / "2026-W23" / OLD).exists()
    status = read_json(".mcp/archive-status.json")
    assert (status["last_run"], status["moved_daily"], status["errors"]) == ("2026-06-10T22:23:15Z", 2, [])

    shown = (await call("dokoro_archive_sweep", status_only=True)).content[0].text
    assert "- **Last run:** 2026-06-10T22:23:15Z" in shown
    assert "- **Daily files moved:** 2" in shown


async def test_a_file_with_a_live_claim_is_left_until_the_claim_is_released(call, root):
    _daily(root, OLD, OTHER_OLD)
    claimed = await call("dokoro_file_claim", paths=[f"dokoro/daily/{OLD}"], agent_id="agent-b", intent="editing")
    assert json.loads(claimed.content[1].text)["claimed"] is True

    swept = await call("dokoro_archive_sweep")

    assert f"- kept daily/{OLD} (claimed)" in swept.content[0].text
    assert swept.structured_content["held"] == [{"path": f"daily/{OLD}", "reason": "claimed"}]
    assert (root / "daily" / OLD).exists()
    assert not (root / "daily" / OTHER_OLD).exists()

    await call("dokoro_file_release", agent_id="agent-b", all=True)
    again = await call("dokoro_archive_sweep")
    assert [m["source"] for m in again.structured_content["moved_daily"]] == [f"daily/{OLD}"]


async def test_claims_are_keyed_from_the_claim_root(call, root):
    _daily(root, OLD)
    # Claimed relative to the store folder itself: invisible from the default root (the server's cwd) ...
    await call("dokoro_file_claim", paths=[f"daily/{OLD}"], agent_id="agent-b", root=str(root))
    swept = await call("dokoro_archive_sweep", dryRun=True, claimRoot=str(root))
    assert swept.structured_content["held"] == [{"path": f"daily/{OLD}", "reason": "claimed"}]
    # ... and honoured when the sweep is told the same root (relative to the cwd here).
    swept = await call("dokoro_archive_sweep", claimRoot="dokoro")
    assert swept.structured_content["moved_daily"] == []


async def test_a_sweep_is_skipped_while_another_holds_the_lock(call, root):
    _daily(root, OLD)
    lock = _lock(root, "2026-06-10T22:21:00Z")  # two minutes old: a live sweep

    swept = await call("dokoro_archive_sweep")

    assert swept.content[0].text == ("Sweep skipped — another sweep holds `.mcp/archive.lock` (benign; retry shortly).")
    assert swept.structured_content["skipped"] == "locked"
    assert (root / "daily" / OLD).exists()
    assert lock.exists()


async def test_a_crashed_sweeps_lock_is_taken_over_after_five_minutes(call, root, clock):
    _daily(root, OLD)
    lock = _lock(root, "2026-06-10T22:21:00Z")  # 2m15s old
    clock.advance(timedelta(minutes=2))
    assert (await call("dokoro_archive_sweep")).structured_content["skipped"] == "locked"

    clock.advance(timedelta(minutes=1))
    swept = await call("dokoro_archive_sweep")

    assert swept.structured_content["skipped"] is None
    assert not (root / "daily" / OLD).exists()
    assert not lock.exists()


async def test_a_dry_run_reports_and_moves_nothing(call, root, clock, snapshot):
    _daily(root, OLD)
    created = await call("dokoro_plan_create", title="Old plan", items=["a"])
    await call("dokoro_plan_check", itemIndex=1)
    clock.advance(timedelta(days=40))
    before = snapshot()

    swept = await call("dokoro_archive_sweep", dryRun=True)

    text = swept.content[0].text
    assert text.startswith("## 🧹 Workspace Sweep (dry run)\n\n**DRY RUN — nothing moved.**")
    assert f"- plan {created.structured_content['id']}" in text
    assert "- **Daily files would move:** 1" in text
    assert snapshot() == before
    assert not (root / ".mcp" / "archive-status.json").exists()
    assert "No sweep has run yet" in (await call("dokoro_archive_sweep", status_only=True)).content[0].text


async def test_finished_plans_are_archived_by_the_sweep(call, clock, root):
    created = await call("dokoro_plan_create", title="Done", items=["a"])
    plan_id = created.structured_content["id"]
    await call("dokoro_plan_check", itemIndex=1)
    clock.advance(timedelta(days=31))

    swept = await call("dokoro_archive_sweep")

    assert swept.structured_content["archived_plans"] == [plan_id]
    assert (root / ".mcp" / "plans" / "archive" / "2026-07" / f"{plan_id}.json").exists()
    status = await call("dokoro_plan_status", planId=plan_id)
    assert status.structured_content["plan"]["archived"] is True


async def test_a_sweep_that_cannot_start_is_an_error(fail, root):
    root.mkdir(parents=True, exist_ok=True)
    (root / ".mcp").write_text("not a folder", encoding="utf-8")
    assert "archive_sweep failed" in await fail("dokoro_archive_sweep")


async def test_negative_thresholds_are_refused(fail):
    await fail("dokoro_archive_sweep", olderThanDays=-1)
    await fail("dokoro_archive_sweep", planOlderThanDays=-5)


async def test_claiming_the_workspace_sweeps_and_says_so(call, root):
    _daily(root, OLD)
    claimed = await call("dokoro_workspace_claim", task="new day")

    assert "🧹 archived 1 old daily file(s) and 0 finished plan(s)" in claimed.content[0].text
    assert claimed.structured_content["sweep"] == "🧹 archived 1 old daily file(s) and 0 finished plan(s)"
    assert (root / "archive" / "daily" / "2026-W23" / OLD).exists()

    again = await call("dokoro_workspace_claim", task="again", force=True)
    assert "🧹" not in again.content[0].text
    assert again.structured_content["sweep"] is None


async def test_the_claims_sweep_leaves_claimed_files_and_is_silent_when_locked(call, root):
    _daily(root, OLD, OTHER_OLD)
    await call("dokoro_file_claim", paths=[f"dokoro/daily/{OLD}"], agent_id="agent-b")
    claimed = await call("dokoro_workspace_claim", task="first")
    assert "archived 1 old daily file(s)" in claimed.content[0].text
    assert (root / "daily" / OLD).exists()

    await call("dokoro_file_release", agent_id="agent-b", all=True)
    _lock(root, "2026-06-10T22:23:00Z")
    locked = await call("dokoro_workspace_claim", task="second", force=True)
    assert "🧹" not in locked.content[0].text
    assert (root / "daily" / OLD).exists()
