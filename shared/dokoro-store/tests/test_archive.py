"""The archive sweep: what moves, what is protected, the singleton lock and the status file."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store.models import Doc
from dokoro_store.procedural.archive.sweep import ArchiveService

# The store's clock stands at Wednesday 2026-06-10 (ISO week 2026-W24).
OLD = "2026-06-01-09h00-monday-session-old.md"  # W23, nine days old
RECENT = "2026-06-05-09h00-friday-session-recent.md"  # W23, five days old
THIS_WEEK = "2026-06-08-09h00-monday-session-this-week.md"  # W24
NEW_YEAR = "2021-01-01-09h00-friday-session-new-year.md"  # ISO week 2020-W53


def _daily(root: Path, *names: str) -> None:
    daily = root / "daily"
    daily.mkdir(parents=True, exist_ok=True)
    for name in names:
        (daily / name).write_text(f"# {name}\n", encoding="utf-8")


def _failing_for(fragment: str):
    """A claim checker that cannot answer for files whose name contains ``fragment``."""

    def check(path: Path, _root: Path) -> bool:
        if fragment in path.name:
            raise OSError("db gone")
        return False

    return check


def _files(root: Path, folder: str) -> list[str]:
    base = root / folder
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*.md")) if base.exists() else []


def test_old_daily_files_move_to_their_iso_week_and_recent_ones_stay(any_store, root):
    _daily(root, OLD, RECENT, THIS_WEEK, NEW_YEAR, "notes.md", "2026-13-45-bad-date.md")

    result = any_store.archive.sweep()

    assert result.skipped is None and result.error is None
    assert sorted(m.target for m in result.moved_daily) == [
        f"archive/daily/2020-W53/{NEW_YEAR}",
        f"archive/daily/2026-W23/{OLD}",
    ]
    assert _files(root, "daily") == sorted(
        f"daily/{n}" for n in (RECENT, THIS_WEEK, "notes.md", "2026-13-45-bad-date.md")
    )
    assert (root / "archive" / "daily" / "2026-W23" / OLD).read_text(encoding="utf-8") == f"# {OLD}\n"


def test_the_current_iso_week_is_never_swept_whatever_the_threshold(any_store, root):
    _daily(root, RECENT, THIS_WEEK, "2026-06-10-08h00-wednesday-session-today.md")

    result = any_store.archive.sweep(older_than_days=0)

    assert [m.source for m in result.moved_daily] == [f"daily/{RECENT}"]
    assert [(h.path, h.reason) for h in result.held] == [
        (f"daily/{THIS_WEEK}", "current_week"),
        ("daily/2026-06-10-08h00-wednesday-session-today.md", "current_week"),
    ]
    assert (root / "daily" / THIS_WEEK).exists()


def test_a_daily_file_under_a_live_claim_stays_put(any_store, root):
    _daily(root, OLD, NEW_YEAR)
    asked: list[tuple[Path, Path]] = []

    def claimed(path: Path, claim_root: Path) -> bool:
        asked.append((path, claim_root))
        return path.name == OLD

    any_store.archive.claims = claimed
    result = any_store.archive.sweep(claim_root=root.parent)

    assert [(h.path, h.reason) for h in result.held] == [(f"daily/{OLD}", "claimed")]
    assert [m.source for m in result.moved_daily] == [f"daily/{NEW_YEAR}"]
    assert (root / "daily" / OLD).exists()
    assert {p for p, _ in asked} == {(root / "daily" / OLD).resolve(), (root / "daily" / NEW_YEAR).resolve()}
    assert {r for _, r in asked} == {root.parent.resolve()}


def test_a_claim_check_that_fails_leaves_the_file_and_records_an_error(any_store, root):
    _daily(root, OLD)

    def broken(_path: Path, _root: Path) -> bool:
        raise OSError("claims unreadable")

    any_store.archive.claims = broken
    result = any_store.archive.sweep()

    assert result.moved_daily == ()
    assert [e.path for e in result.errors] == [f"daily/{OLD}"]
    assert "claims unreadable" in result.errors[0].error
    assert (root / "daily" / OLD).exists()


def test_a_sweep_is_skipped_while_another_holds_a_fresh_lock(any_store, root, clock):
    _daily(root, OLD)
    lock = root / ".mcp" / "archive.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": 1, "started_at": "2026-06-10T22:20:00Z"}), encoding="utf-8")

    for dry_run in (True, False):
        result = any_store.archive.sweep(dry_run=dry_run)
        assert result.skipped == "locked"
    assert (root / "daily" / OLD).exists()
    assert lock.exists()  # someone else's lock is never removed
    assert any_store.archive.status() is None


def test_a_crashed_sweeps_lock_expires_after_five_minutes(any_store, root):
    _daily(root, OLD)
    lock = root / ".mcp" / "archive.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": 999999, "started_at": "2026-06-10T22:18:15Z"}), encoding="utf-8")

    result = any_store.archive.sweep()

    assert result.skipped is None
    assert [m.source for m in result.moved_daily] == [f"daily/{OLD}"]
    assert not lock.exists()  # released after the run


@pytest.mark.parametrize("garbage", ["", "{not json", '{"pid": 3}'])
def test_an_unreadable_lock_is_taken_over(any_store, root, garbage):
    lock = root / ".mcp" / "archive.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(garbage, encoding="utf-8")

    assert any_store.archive.sweep().skipped is None
    assert not lock.exists()


def test_a_dry_run_reports_everything_and_moves_nothing(any_store, root, clock):
    _daily(root, OLD)
    plan = any_store.plans.create("Old plan", ["a"])
    any_store.plans.check(1)
    clock.advance(timedelta(days=31))
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".dokoro" not in p.parts)

    result = any_store.archive.sweep(dry_run=True)

    assert result.dry_run
    assert [m.target for m in result.moved_daily] == [f"archive/daily/2026-W23/{OLD}"]
    assert result.archived_plans == (plan.id,)
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".dokoro" not in p.parts)
    assert [p for p in after if not p.startswith(".mcp/locks")] == [p for p in before if not p.startswith(".mcp/locks")]
    assert not any_store.plans.get(plan.id).archived
    assert any_store.archive.status() is None


def test_finished_plans_older_than_the_threshold_are_archived(any_store, clock):
    active = any_store.plans.create("Still going", ["a", "b"])
    any_store.plans.check(1, plan_id=active.id)
    done = any_store.plans.create("Done long ago", ["a"])
    any_store.plans.check(1, plan_id=done.id)
    clock.advance(timedelta(days=20))
    fresh = any_store.plans.create("Done lately", ["a"])
    any_store.plans.check(1, plan_id=fresh.id)
    clock.advance(timedelta(days=11))

    result = any_store.archive.sweep()

    assert result.archived_plans == (done.id,)
    assert any_store.plans.get(done.id).archived
    assert not any_store.plans.get(fresh.id).archived
    assert not any_store.plans.get(active.id).archived
    assert any_store.archive.sweep(plan_older_than_days=0).archived_plans == (fresh.id,)


def test_a_real_run_writes_the_status_file(any_store, root):
    _daily(root, OLD, NEW_YEAR)
    any_store.archive.claims = _failing_for("new-year")

    any_store.archive.sweep()

    data = json.loads((root / ".mcp" / "archive-status.json").read_text(encoding="utf-8"))
    assert data["last_run"] == "2026-06-10T22:23:15Z"
    assert data["moved_daily"] == 1
    assert data["archived_plans"] == 0
    assert data["errors"][0]["path"] == f"daily/{NEW_YEAR}"
    assert "db gone" in data["last_error"]
    status = any_store.archive.status()
    assert (status.moved_daily, status.archived_plans, len(status.errors)) == (1, 0, 1)
    assert not list((root / ".mcp").glob(".archive-status.json.*.tmp"))


def test_an_unreadable_status_file_reads_as_no_sweep(any_store, root):
    (root / ".mcp").mkdir(parents=True, exist_ok=True)
    (root / ".mcp" / "archive-status.json").write_text("{", encoding="utf-8")
    assert any_store.archive.status() is None


def test_a_swept_session_dump_keeps_its_document_row_pointing_at_the_file(any_store, root, clock):
    any_store.working.workspace.claim("old work")
    dumped = any_store.working.workspace.dump("end", keep_active=False)
    clock.advance(timedelta(days=14))

    result = any_store.archive.sweep()

    (moved,) = result.moved_daily
    assert moved.source == dumped.relative
    with any_store.db.read() as session:
        assert session.get(Doc, dumped.doc_id).filepath == moved.target
    assert (root / moved.target).exists()


def test_a_file_already_in_the_archive_is_not_overwritten(any_store, root):
    _daily(root, OLD, NEW_YEAR)
    week = root / "archive" / "daily" / "2026-W23"
    week.mkdir(parents=True)
    (week / OLD).write_text("a different file\n", encoding="utf-8")
    same = root / "archive" / "daily" / "2020-W53"
    same.mkdir(parents=True)
    (same / NEW_YEAR).write_text(f"# {NEW_YEAR}\n", encoding="utf-8")  # an interrupted earlier run

    result = any_store.archive.sweep()

    assert sorted(m.target for m in result.moved_daily) == [
        f"archive/daily/2020-W53/{NEW_YEAR}",
        f"archive/daily/2026-W23/{OLD[:-3]}-2.md",
    ]
    assert (week / OLD).read_text(encoding="utf-8") == "a different file\n"
    assert _files(root, "daily") == []


def test_the_sweep_after_a_claim_speaks_only_when_it_did_something(any_store, root):
    assert any_store.archive.after_claim() is None
    _daily(root, OLD)
    assert any_store.archive.after_claim() == "🧹 archived 1 old daily file(s) and 0 finished plan(s)"
    _daily(root, NEW_YEAR)
    any_store.archive.claims = _failing_for("")
    assert any_store.archive.after_claim() == "⚠ sweep hit 1 file error(s)"


def test_a_claim_runs_the_sweep_and_carries_its_note(any_store, root):
    _daily(root, OLD)
    claimed = any_store.working.workspace.claim("start the day")
    assert claimed.sweep_note == "🧹 archived 1 old daily file(s) and 0 finished plan(s)"
    assert not (root / "daily" / OLD).exists()


def test_a_sweep_bug_never_fails_the_claim(any_store, root, monkeypatch):
    def explode(self, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(ArchiveService, "sweep", explode)
    claimed = any_store.working.workspace.claim("still works")
    assert claimed.sweep_note == "⚠ sweep error: boom"
    assert (root / "current.md").exists()


def test_archiving_one_daily_file_honours_the_protections_unless_forced(any_store, root):
    _daily(root, OLD, THIS_WEEK)
    archive = any_store.archive

    assert archive.archive_daily_file(THIS_WEEK).outcome == "currentWeek"
    archive.claims = lambda path, _root: path.name == OLD
    assert archive.archive_daily_file(OLD).outcome == "claimed"
    moved = archive.archive_daily_file(OLD, force=True)
    assert (moved.outcome, moved.target) == ("moved", f"archive/daily/2026-W23/{OLD}")
    assert archive.archive_daily_file(OLD).outcome == "alreadyArchived"
    assert archive.archive_daily_file("2026-06-02-nothing.md").outcome == "missing"
    with pytest.raises(ValueError, match="not a file name"):
        archive.archive_daily_file("../current.md")
