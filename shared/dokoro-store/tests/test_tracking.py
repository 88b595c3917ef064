"""Tracking rows in the store: rules, renderings read back, concurrency, task time, on both backends."""

from __future__ import annotations

import threading
import time
from datetime import UTC, date, datetime

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.models import TaskTimer
from dokoro_store.procedural.tracking.markdown import hand_edits, parse_item, render_item
from dokoro_store.procedural.tracking.rules import TRANSITIONS, check_transition, iso_week, week_bounds


def test_every_transition_names_known_statuses_and_archived_is_final():
    for kind, table in TRANSITIONS.items():
        for source, targets in table.items():
            assert set(targets) <= set(table), (kind, source)
        assert table["archived"] == ()
    with pytest.raises(InvalidArgumentError, match="archived and read-only"):
        check_transition("issue", "x", "archived", "active", verb="start work")


def test_iso_weeks_use_the_week_year_and_refuse_weeks_a_year_lacks():
    assert iso_week(date(2025, 12, 29)) == (2026, 1)
    assert iso_week(date(2027, 1, 1)) == (2026, 53)
    assert week_bounds(2026, 53) == (date(2026, 12, 28), date(2027, 1, 3))
    with pytest.raises(InvalidArgumentError, match="week 53 does not exist in ISO week-year 2025: weeks run from 1"):
        week_bounds(2025, 53)
    with pytest.raises(InvalidArgumentError):
        week_bounds(2026, 0)


def test_a_rendering_reads_back_to_its_fields_and_a_hand_edit_to_exactly_what_changed(store: Store):
    added = store.tracking.add_issue("Flaky login test", "bug", "high", "2h", "Fails one run in ten.")
    row = store.tracking.items.get(added.item.id)
    text = render_item(row, store.tracking.items.events([row.id])[row.id])
    parsed = parse_item(text)
    assert parsed.item_id == row.id and parsed.version == row.version
    assert parsed.fields["title"] == "Flaky login test"
    assert parsed.fields["description"] == "Fails one run in ten."
    assert parsed.fields["solution"] is None and parsed.fields["notes"] is None
    assert parsed.front["priority"] == "high" and parsed.details["priority"] == "high"

    assert hand_edits(text, text) == ({}, [])
    edited = text.replace("- **Estimate:** 2h", "- **Estimate:** 1d").replace(
        "## Progress Log\n", "## Progress Log\n- 2026-06-11 — paired with Ana\n"
    )
    changes, generated = hand_edits(text, edited)
    assert changes["estimate"] == "1d"
    assert "paired with Ana" in changes["notes"] and len(generated) == 1
    assert set(changes) == {"estimate", "notes"}


def test_two_agents_resolving_one_issue_at_once_cannot_both_win(any_store: Store):
    issue = any_store.tracking.add_issue("Race me").item.id
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def resolve(agent: str) -> None:
        barrier.wait()
        try:
            any_store.tracking.complete_issue(issue, f"fixed by {agent}", agent_id=agent)
            outcomes.append("won")
        except InvalidArgumentError as exc:
            assert "already resolved" in str(exc)
            outcomes.append("refused")

    threads = [threading.Thread(target=resolve, args=(f"agent-{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["refused", "refused", "refused", "won"]
    events = any_store.tracking.items.events([issue])[issue]
    assert [e.action for e in events] == ["added", "resolved"]
    assert [e.seq for e in events] == [1, 2]


def test_task_time_splits_exactly_into_active_and_paused_on_the_database_clock(any_store: Store):
    tasks = any_store.tracking.tasks
    tasks.track("start", "ana", title="exact")
    time.sleep(0.02)
    tasks.track("pause", "ana")
    time.sleep(0.05)
    tasks.track("resume", "ana")
    time.sleep(0.02)
    tasks.track("pause", "ana", reason="call")
    time.sleep(0.03)
    done = tasks.track("complete", "ana").task

    assert done.status == "completed" and done.paused_at is None and done.resumed_at is None
    assert done.ended_at is not None
    wall = (done.ended_at - done.started_at).total_seconds()
    assert done.active_seconds + done.pause_seconds == pytest.approx(wall, abs=1e-6)
    assert done.pause_seconds >= 0.08 and done.active_seconds >= 0.04
    with any_store.db.read() as session:
        assert session.get(TaskTimer, done.id).pause_seconds == pytest.approx(done.pause_seconds)
    # The clock is the database's: not this process's (frozen at 2026-06-10 in these tests).
    assert abs((done.ended_at - datetime.now(UTC)).total_seconds()) < 3600
