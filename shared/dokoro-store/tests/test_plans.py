"""Plans: rows shared through the database, atomic mirrors, lifecycle and archiving, on both backends."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from dokoro_store import InvalidArgumentError, NotFoundError, Store
from dokoro_store.models import Plan
from dokoro_store.procedural.plans.service import PlanArchivedError, completion_percentage


def _index(store):
    return json.loads((store.paths.mcp_dir / "plans" / "index.json").read_text(encoding="utf-8"))


def _mirror(store, plan_id):
    return json.loads((store.paths.mcp_dir / "plans" / f"{plan_id}.json").read_text(encoding="utf-8"))


def test_completion_rounds_halves_up_and_is_zero_for_an_empty_plan():
    assert completion_percentage(1, 8) == 13  # 12.5
    assert completion_percentage(1, 3) == 33
    assert completion_percentage(2, 3) == 67
    assert completion_percentage(0, 0) == 0


def test_a_new_plan_is_an_active_row_with_a_json_mirror_and_an_index_entry(any_store):
    plan = any_store.plans.create("Ship the login page", ["design", "build", "test"], "first cut", agent_id="a1")

    assert plan.id == "plan-2026-06-10-22h23-wednesday-ship-the-login-page"
    assert (plan.status, plan.completion, plan.total) == ("active", 0, 3)
    assert [item.index for item in plan.items] == [1, 2, 3]
    mirror = _mirror(any_store, plan.id)
    assert mirror["status"] == "active"
    assert mirror["description"] == "first cut"
    assert mirror["completion_percentage"] == 0
    assert [item["id"] for item in mirror["items"]] == ["item-0", "item-1", "item-2"]
    assert mirror["items"][0] == {
        "id": "item-0",
        "text": "design",
        "completed": False,
        "created_at": "2026-06-10T22:23:15Z",
    }
    assert _index(any_store) == {plan.id: "Ship the login page"}
    with any_store.db.read() as session:
        assert session.get(Plan, plan.id).agent_id == "a1"


def test_two_plans_with_one_title_in_one_minute_get_distinct_ids(any_store):
    first = any_store.plans.create("Same", ["x"])
    second = any_store.plans.create("Same", ["y"])
    third = any_store.plans.create("!!!", ["z"])

    assert second.id == first.id + "-2"
    assert third.id == "plan-2026-06-10-22h23-wednesday"


def test_checking_every_item_completes_the_plan_and_unchecking_reopens_it(any_store, clock):
    plan = any_store.plans.create("Two steps", ["one", "two"])
    clock.advance(timedelta(minutes=30))
    first = any_store.plans.check(1, notes="went fine")
    assert (first.plan.status, first.plan.completion, first.finished) == ("active", 50, False)
    assert first.item.notes == "went fine"
    assert first.item.completed_at == clock.now()

    done = any_store.plans.check(2, plan_id=plan.id)
    assert (done.plan.status, done.plan.completion, done.finished) == ("completed", 100, True)
    assert _mirror(any_store, plan.id)["status"] == "completed"

    # The reference left it "completed" (§7.15): an unchecked item means the plan is open again.
    reopened = any_store.plans.check(2, plan_id=plan.id, uncheck=True)
    assert (reopened.plan.status, reopened.plan.completion, reopened.reopened) == ("active", 50, True)
    assert reopened.item.completed is False
    assert reopened.item.completed_at is None
    assert _mirror(any_store, plan.id)["status"] == "active"


def test_the_default_plan_is_the_newest_live_active_one(any_store, clock):
    older = any_store.plans.create("Older", ["a"])
    clock.advance(timedelta(minutes=1))
    newer = any_store.plans.create("Newer", ["a", "b"])

    assert any_store.plans.check(1).plan.id == newer.id
    any_store.plans.check(2)  # completes "Newer": no longer active
    assert any_store.plans.check(1).plan.id == older.id
    with pytest.raises(NotFoundError, match="No active plans to check"):
        any_store.plans.check(1)


def test_an_item_index_out_of_range_says_how_many_items_there_are(any_store):
    any_store.plans.create("Short", ["only"])

    for bad in (0, 2, -1):
        with pytest.raises(InvalidArgumentError, match=r"Plan has 1 items \(itemIndex is 1-based: 1..1\)"):
            any_store.plans.check(bad)
    with pytest.raises(NotFoundError, match="No plan with ID 'nope'"):
        any_store.plans.check(1, plan_id="nope")


def test_blockers_accumulate_on_their_item(any_store):
    plan = any_store.plans.create("Blocked", ["deploy"])
    any_store.plans.add_blocker(1, "waiting for credentials")
    added = any_store.plans.add_blocker(1, "staging is down", plan_id=plan.id)

    assert added.item.blockers == ("waiting for credentials", "staging is down")
    assert _mirror(any_store, plan.id)["items"][0]["blockers"] == ["waiting for credentials", "staging is down"]


def test_validating_writes_the_report_and_archives_the_plan_read_only(any_store, clock):
    plan = any_store.plans.create("Release | v2", ["tag the release", "announce"])
    clock.advance(timedelta(hours=2))
    any_store.plans.check(1)
    any_store.plans.add_blocker(2, "blog is down")

    done = any_store.plans.validate(notes="shipped without the post")

    assert done.plan.status == "validated"
    assert done.archive is not None and done.archive.ok
    assert done.plan.archive_path == f"archive/2026-06/{plan.id}.json"
    assert done.report_relative == f"daily/2026-06-11-00h23-thursday-validation-{plan.id}.md"
    report = done.report_path.read_text(encoding="utf-8")
    assert 'plan_id: "' + plan.id + '"' in report
    assert "| 1 | tag the release | ✅ | 2026-06-11T00:23:15Z | 2h |" in report
    assert "| 2 | announce | ❌ | - | - |" in report
    assert "⛔ blog is down" in report
    assert "shipped without the post" in report
    plans_dir = any_store.paths.mcp_dir / "plans"
    assert not (plans_dir / f"{plan.id}.json").exists()
    archived = json.loads((plans_dir / done.plan.archive_path).read_text(encoding="utf-8"))
    assert archived["status"] == "validated"
    assert archived["archived"] is True
    assert _index(any_store)[plan.id] == {
        "title": "Release | v2",
        "archived": True,
        "archive_path": f"archive/2026-06/{plan.id}.json",
    }

    for attempt in (
        lambda: any_store.plans.check(2, plan_id=plan.id),
        lambda: any_store.plans.add_blocker(2, "x", plan_id=plan.id),
        lambda: any_store.plans.validate(plan_id=plan.id),
    ):
        with pytest.raises(PlanArchivedError, match=f"archived and read-only at `.mcp/plans/archive/2026-06/{plan.id}"):
            attempt()
    # Still readable and listed, marked archived.
    assert any_store.plans.status().id == plan.id
    (listed,) = any_store.plans.list()
    assert listed.archived


def test_validating_an_incomplete_plan_with_require_complete_fails_it_and_keeps_it_live(any_store):
    plan = any_store.plans.create("Half", ["a", "b"])
    any_store.plans.check(1)

    done = any_store.plans.validate(require_complete=True)

    assert done.plan.status == "failed"
    assert done.archive is None
    assert not done.plan.archived
    assert (any_store.paths.mcp_dir / "plans" / f"{plan.id}.json").exists()
    # A failed plan is not a default target any more, but can still be finished by id.
    with pytest.raises(NotFoundError):
        any_store.plans.check(2)
    assert any_store.plans.check(2, plan_id=plan.id).plan.status == "completed"


def test_an_archive_interrupted_after_the_move_is_healed_on_the_next_read(any_store, root):
    plan = any_store.plans.create("Crashy", ["a"])
    any_store.plans.check(1)
    plans_dir = root / ".mcp" / "plans"
    # The crash window: the file moved to its archive partition, the row and index not yet marked.
    target = plans_dir / "archive" / "2026-05" / f"{plan.id}.json"
    target.parent.mkdir(parents=True)
    (plans_dir / f"{plan.id}.json").replace(target)
    assert _index(any_store)[plan.id] == "Crashy"

    seen = any_store.plans.status(plan.id)

    assert seen.archived
    assert seen.archive_path == f"archive/2026-05/{plan.id}.json"
    assert _index(any_store)[plan.id]["archived"] is True
    with pytest.raises(PlanArchivedError):
        any_store.plans.check(1, plan_id=plan.id)


def test_a_half_archived_plan_is_never_picked_as_the_default_target(any_store, root, clock):
    older = any_store.plans.create("Older", ["a"])
    clock.advance(timedelta(minutes=1))
    newer = any_store.plans.create("Newer", ["a"])
    plans_dir = root / ".mcp" / "plans"
    (plans_dir / "archive" / "2026-06").mkdir(parents=True)
    (plans_dir / f"{newer.id}.json").replace(plans_dir / "archive" / "2026-06" / f"{newer.id}.json")

    assert any_store.plans.check(1).plan.id == older.id
    assert any_store.plans.get(newer.id).archived


def test_archiving_is_idempotent_and_restores_a_missing_archive_file(any_store, root):
    plan = any_store.plans.create("Twice", ["a"])
    first = any_store.plans.archive(plan.id)
    assert first.ok and not first.already
    again = any_store.plans.archive(plan.id)
    assert again.ok and again.already
    (root / ".mcp" / "plans" / first.archive_path).unlink()
    assert any_store.plans.archive(plan.id).ok
    assert (root / ".mcp" / "plans" / first.archive_path).exists()
    missing = any_store.plans.archive("plan-nope")
    assert not missing.ok and "No plan" in missing.error


def test_the_list_shows_live_plans_newest_first_then_archived_ones(any_store, clock):
    a = any_store.plans.create("A", ["x"])
    clock.advance(timedelta(minutes=1))
    b = any_store.plans.create("B", ["x"])
    clock.advance(timedelta(minutes=1))
    c = any_store.plans.create("C", ["x"])
    any_store.plans.check(1, plan_id=b.id)
    any_store.plans.validate(plan_id=b.id)

    assert [p.id for p in any_store.plans.list()] == [c.id, a.id, b.id]
    assert [p.id for p in any_store.plans.list("validated")] == [b.id]
    assert [p.id for p in any_store.plans.list("active")] == [c.id, a.id]
    assert any_store.plans.list("completed") == []
    with pytest.raises(InvalidArgumentError):
        any_store.plans.list("weird")


def test_bad_plans_are_refused_and_write_nothing(any_store, root):
    for title, items in (("  ", ["a"]), ("T", []), ("T", ["ok", "  "]), ("T", ["x"] * 201)):
        with pytest.raises(InvalidArgumentError):
            any_store.plans.create(title, items)
    assert any_store.plans.list() == []
    assert not (root / ".mcp" / "plans").exists()


def test_plans_are_shared_by_every_store_over_one_database(any_store, root, clock, database_url, tmp_path):
    plan = any_store.plans.create("Team", ["a", "b"])
    # Another agent's process, with its own workspace folder, on the same database.
    other_root = root if database_url is None else tmp_path / "elsewhere"
    with Store.open(other_root, database_url=database_url, clock=clock) as other:
        other.plans.check(2)
        assert other.plans.status().id == plan.id
    assert any_store.plans.get(plan.id).items[1].completed


def test_plan_lines_are_logged_to_the_claimed_workspace(any_store, root):
    any_store.working.workspace.claim("plan things")
    any_store.plans.create("Logged", ["first step"])
    any_store.plans.check(1, notes="easy")
    text = (root / "current.md").read_text(encoding="utf-8")
    assert "PLAN CREATED: Logged" in text
    assert "1. [ ] first step" in text
    assert "COMPLETED: first step" in text
    assert "Note: easy" in text


def test_agents_checking_different_items_at_once_lose_nothing(any_store, root, clock, database_url):
    plan = any_store.plans.create("Race", [f"step {i}" for i in range(1, 9)])
    agents = [Store.open(root, database_url=database_url, clock=clock) for _ in range(4)]
    barrier = threading.Barrier(len(agents))
    failures: list[BaseException] = []

    def work(number: int, store: Store) -> None:
        try:
            barrier.wait(timeout=30)
            for index in (2 * number + 1, 2 * number + 2):
                store.plans.check(index, plan_id=plan.id)
        except BaseException as exc:  # surfaced below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n, s)) for n, s in enumerate(agents)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for store in agents:
        store.close()

    assert failures == []
    done = any_store.plans.get(plan.id)
    assert (done.done, done.status) == (8, "completed")
    assert _mirror(any_store, plan.id)["completion_percentage"] == 100
