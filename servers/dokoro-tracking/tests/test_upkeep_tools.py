"""Backups, restores and health of the tracking rows and their renderings."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from dokoro_store.models import TrackingItem
from sqlalchemy import delete, update

pytestmark = pytest.mark.anyio


async def test_a_backup_is_the_stores_export_of_the_tracking_tables(call, root, clock):
    await call("dokoro_issue_add", title="One")
    await call("dokoro_weekly_add_item", type="task", title="Two")
    verified = await call("dokoro_backup_verify", create_backup=True)
    created = verified.structured_content["created"]
    assert created["path"] == "tracking/backups/backup-20260610-222315.json"
    document = json.loads((root / created["path"]).read_text(encoding="utf-8"))
    assert document["format"] == "dokoro-backup" and document["scope"] == "tracking"
    assert [r["title"] for r in document["tables"]["tracking_items"]] == ["One"]
    assert created["rows"] == {
        "tracking_items": 1,
        "tracking_events": 1,
        "tracking_weekly_items": 1,
        "tracking_tasks": 0,
    }
    assert verified.structured_content["items"]["issue"]["pending"] == 1
    assert verified.structured_content["changed_last_24h"] == ["2026-06-10-22h23-wednesday"]

    clock.advance(timedelta(hours=3))
    later = await call("dokoro_backup_verify")
    assert later.structured_content["created"] is None
    assert later.structured_content["latest"]["age_seconds"] == 3 * 3600
    assert "3.0 h old" in later.content[0].text


async def test_restore_is_a_dry_run_unless_told_and_brings_back_missing_and_older_rows(call, fail, root, store, clock):
    assert "No backup under tracking/backups/" in await fail("dokoro_restore_items", source="backup")
    nothing = await call("dokoro_restore_items")
    assert nothing.structured_content["source"] is None and nothing.structured_content["items"] == []

    lost = (await call("dokoro_issue_add", title="Will be lost")).structured_content
    edited = (await call("dokoro_issue_add", title="Will be rolled back")).structured_content["item"]["id"]
    kept = (await call("dokoro_feature_add", title="Changed after the backup")).structured_content["item"]["id"]
    await call("dokoro_backup_verify", create_backup=True)
    clock.advance(timedelta(minutes=10))
    await call("dokoro_feature_start", feature_id=kept)
    with store.db.write() as session:
        session.execute(delete(TrackingItem).where(TrackingItem.id == lost["item"]["id"]))
        earlier = store.clock.now() - timedelta(days=1)
        session.execute(
            update(TrackingItem).where(TrackingItem.id == edited).values(title="Scrambled", updated_at=earlier)
        )
    (root / lost["path"]).unlink()

    preview = await call("dokoro_restore_items")
    assert preview.structured_content["dry_run"] is True
    reasons = {i["key"]: i["reason"] for i in preview.structured_content["items"]}
    assert reasons == {lost["item"]["id"]: "missing", edited: "older"}
    assert preview.structured_content["newer_here"] == 1
    assert store.tracking.items.get(lost["item"]["id"]) is None  # a dry run changes nothing

    restored = await call("dokoro_restore_items", dry_run=False, type="issues")
    assert all(i["applied"] for i in restored.structured_content["items"])
    back = store.tracking.items.get(lost["item"]["id"])
    assert back is not None and back.title == "Will be lost"
    assert [e.action for e in store.tracking.items.events([back.id])[back.id]] == ["added"]
    assert store.tracking.items.get(edited).title == "Will be rolled back"
    assert store.tracking.items.get(kept).status == "active"
    assert (root / lost["path"]).exists()


async def test_health_check_reports_and_fixes_folders_and_renderings(call, root):
    added = await call("dokoro_issue_add", title="Render me")
    (root / added.structured_content["path"]).unlink()
    (root / "tracking" / "features" / "archived").rmdir()
    stray = root / "tracking" / "issues" / "pending" / "notes-from-standup.md"
    stray.write_text("# Standup\n\nnothing to see\n", encoding="utf-8")

    check = await call("dokoro_health_check")
    kinds = {(p["kind"], p["path"]) for p in check.structured_content["problems"]}
    assert ("missing_dir", "tracking/features/archived") in kinds
    assert ("missing_rendering", added.structured_content["path"]) in kinds
    assert ("unknown_file", "tracking/issues/pending/notes-from-standup.md") in kinds
    assert check.structured_content["healthy"] is False
    assert "fix_issues=true" in check.content[0].text
    assert not (root / added.structured_content["path"]).exists()  # a check alone fixes nothing

    fixed = await call("dokoro_health_check", fix_issues=True)
    assert {p["kind"] for p in fixed.structured_content["problems"] if p["fixed"]} == {
        "missing_dir",
        "missing_rendering",
    }
    assert (root / added.structured_content["path"]).exists()
    assert (root / "tracking" / "features" / "archived").is_dir()
    assert stray.exists()  # never deleted: a person's file

    stray.unlink()
    healthy = await call("dokoro_health_check")
    assert healthy.structured_content["healthy"] is True
    assert "Tracking Healthy" in healthy.content[0].text


async def test_a_rendering_made_stale_by_another_agent_is_written_again(call, root, store):
    added = await call("dokoro_issue_add", title="Shared issue")
    issue = added.structured_content["item"]["id"]
    # Another machine (same database, its own folder) moves the issue: only the row changes here.
    store.tracking.items.transition(issue, "active", verb="start work", action="started", agent_id="bob")

    verified = await call("dokoro_backup_verify")
    path = f"tracking/issues/active/{issue}-shared-issue.md"
    assert verified.structured_content["rerendered"] == [path]
    assert verified.structured_content["reconciled"] == []  # stale is not hand-edited
    assert "started (pending → active) by bob" in (root / path).read_text(encoding="utf-8")
    assert not (root / added.structured_content["path"]).exists()


async def test_a_store_without_tracking_is_healthy_and_gets_no_empty_folders(call, root):
    await call("dokoro_issue_list")
    check = await call("dokoro_health_check")
    assert check.structured_content["healthy"] is True and check.structured_content["problems"] == []
    assert not (root / "tracking").exists()
