"""What a person does by hand in ``dokoro browse``: advance a plan, undo an archive, release a stale
claim; and the write signal the browser polls. On both backends."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dokoro_store import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.models import AgentPresence, FileClaim
from dokoro_store.procedural.plans.service import PlanArchivedError
from sqlalchemy import update

ROOT = Path("/work/project")
START = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
OLD = "2026-06-01-09h00-monday-session-old.md"


def test_a_plan_advances_one_step_only_from_the_status_the_person_saw(any_store):
    plan = any_store.plans.create("Ship it", ["build", "test"])

    with pytest.raises(ConflictError, match="is active now, not draft"):
        any_store.plans.advance(plan.id, "draft")
    done = any_store.plans.advance(plan.id, "active")

    assert done.status == "completed"
    mirror = (any_store.plans.files.live(plan.id)).read_text(encoding="utf-8")
    assert '"status": "completed"' in mirror
    with pytest.raises(InvalidArgumentError, match="no step forward from 'completed'"):
        any_store.plans.advance(plan.id, "completed")
    with pytest.raises(NotFoundError):
        any_store.plans.advance("plan-nope", "active")


def test_an_archived_plan_is_restored_live_and_writable(any_store):
    plan = any_store.plans.create("Ship it", ["build"])
    archived = any_store.plans.archive(plan.id)
    with pytest.raises(PlanArchivedError):
        any_store.plans.advance(plan.id, "active")

    restored = any_store.plans.unarchive(plan.id)

    assert not restored.archived
    assert any_store.plans.files.live(plan.id).is_file()
    assert not any_store.plans.files.archived(archived.archive_path).exists()
    assert any_store.plans.advance(plan.id, "active").status == "completed"
    assert any_store.plans.unarchive(plan.id).archived is False  # already live: nothing to do


def test_an_archived_daily_file_moves_back_and_its_document_follows(any_store, root):
    (root / "daily").mkdir(parents=True)
    (root / "daily" / OLD).write_text("# old session\n", encoding="utf-8")
    any_store.markdown.reconcile()
    moved = any_store.archive.archive_daily_file(OLD)

    back = any_store.archive.unarchive_daily_file(moved.target)

    assert (back.outcome, back.target) == ("restored", f"daily/{OLD}")
    assert (root / "daily" / OLD).is_file()
    with any_store.db.read() as session:
        from dokoro_store.models import Doc
        from sqlmodel import select

        assert [d.filepath for d in session.exec(select(Doc))] == [f"daily/{OLD}"]
    assert any_store.archive.unarchive_daily_file(moved.target).outcome == "missing"
    with pytest.raises(InvalidArgumentError, match=r"leaves .*: dokoro reads and writes only inside it"):
        any_store.archive.unarchive_daily_file("../../etc/passwd")
    with pytest.raises(InvalidArgumentError, match="not a file under archive/daily"):
        any_store.archive.unarchive_daily_file("daily/notes.md")


def test_a_daily_file_is_not_restored_over_a_new_one(any_store, root):
    (root / "daily").mkdir(parents=True)
    (root / "daily" / OLD).write_text("# old\n", encoding="utf-8")
    moved = any_store.archive.archive_daily_file(OLD)
    (root / "daily" / OLD).write_text("# new\n", encoding="utf-8")

    assert any_store.archive.unarchive_daily_file(moved.target).outcome == "occupied"
    assert (root / "daily" / OLD).read_text(encoding="utf-8") == "# new\n"


def _key(store):
    return store.coord.claims.list(include_expired=True)[0].path


def test_a_person_releases_a_stale_claim_but_never_a_live_one(any_store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=3600)
    any_store.coord.presence.ping("alice")
    key = _key(any_store)

    assert claims.release_stale(key) == "holderLive"
    with any_store.db.write() as session:
        session.execute(update(AgentPresence).values(last_heartbeat=AgentPresence.last_heartbeat - 901))
    assert claims.release_stale(key) == "released"
    assert claims.release_stale(key) == "alreadyReleased"
    assert claims.release_stale("nope.py") == "missing"
    assert [e.action for e in claims.history("a.py", root=ROOT)] == ["claimed", "released"]


def test_an_expired_claim_is_released_whatever_the_presence(any_store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=60)
    with any_store.db.write() as session:
        session.execute(update(FileClaim).values(expires_at=FileClaim.expires_at - 61))

    assert claims.release_stale(_key(any_store)) == "released"


def test_feedback_rows_come_newest_first(any_store):
    any_store.feedback.record("alice", "dokoro_search", "success", latency_ms=12, recorded_at=START)
    any_store.feedback.record(
        "bob", "dokoro_plan_check", "failure", error_message="no plan", recorded_at=START + timedelta(minutes=1)
    )

    rows = any_store.feedback_log.recent(10)

    assert [(r.agent_id, r.tool_name, r.outcome) for r in rows] == [
        ("bob", "dokoro_plan_check", "failure"),
        ("alice", "dokoro_search", "success"),
    ]
    assert len(any_store.feedback_log.recent(1)) == 1
    with pytest.raises(InvalidArgumentError):
        any_store.feedback_log.recent(0)


def test_the_change_signal_moves_on_a_write_by_another_process_and_not_on_reads(any_store, root, database_url):
    signal = any_store.change_signal()
    try:
        before = signal.token()
        any_store.board.docs(None)
        assert signal.token() == before
        script = textwrap.dedent(
            f"""
            from pathlib import Path
            from dokoro_store import Store
            with Store.open(Path({str(root)!r}), database_url={database_url!r}) as store:
                store.docs.save("from-elsewhere", "written by another process")
            """
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        after = signal.token()
        assert after != before
        assert signal.token() == after
    finally:
        signal.close()
