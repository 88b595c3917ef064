"""Readable ids taken inside the write transaction (db/ids.py): issues, plans, a week's items."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.db.ids import TakenId, take_id
from dokoro_store.models import Plan as PlanRow
from dokoro_store.models import TrackingItem, WeeklyItem
from sqlmodel import col, select

START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)


def _issue(store: Store, base: str, title: str = "Same title") -> str:
    change = store.tracking.items.add("issue", base, title=title, priority="medium", estimate="1h", description=None)
    return change.item.id


def test_the_first_free_of_base_base_2_base_3_is_taken(any_store: Store) -> None:
    assert _issue(any_store, "fix") == "fix"
    assert _issue(any_store, "fix") == "fix-2"
    assert _issue(any_store, "fix-2") == "fix-2-2"  # a title whose own id is taken by a number
    assert _issue(any_store, "fix") == "fix-3"
    assert _issue(any_store, "fi") == "fi"  # a shorter base that prefixes others is free itself
    db = any_store.db
    with db.write() as session:
        assert take_id(session, db.ops, col(TrackingItem.id), "fix") == TakenId("fix-4", 4)
        assert take_id(session, db.ops, col(TrackingItem.id), "fix", first=2) == TakenId("fix-4", 4)
        assert take_id(session, db.ops, col(TrackingItem.id), "fix", first=7) == TakenId("fix-7", 7)
        assert take_id(session, db.ops, col(TrackingItem.id), "new", first=1) == TakenId("new-1", 1)
        assert take_id(session, db.ops, col(TrackingItem.id), "100%_x") == TakenId("100%_x", 1)  # LIKE escaped


def test_a_weeks_item_takes_the_number_after_the_last_position(any_store: Store) -> None:
    first = any_store.tracking.weekly.add("task", "One").item
    second = any_store.tracking.weekly.add("task", "Two").item
    week = first.week
    assert (first.id, first.position) == (f"{week}-1", 1)
    assert (second.id, second.position) == (f"{week}-2", 2)
    assert any_store.tracking.weekly.add("task", "one").item.id == first.id  # the same title: that item


def test_many_threads_adding_at_once_all_get_their_own_ids(any_store: Store) -> None:
    ids: list[str] = []
    errors: list[BaseException] = []

    def add(n: int) -> None:
        try:
            ids.append(_issue(any_store, "race"))
            ids.append(any_store.plans.create("Same plan", ["step"]).id)
            ids.append(any_store.tracking.weekly.add("task", f"item {n}").item.id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(ids) == len(set(ids)) == 24


_ALLOCATE = """
import json, sys
from datetime import datetime
from pathlib import Path
from dokoro_store import FrozenClock, Store
root, url, tag, count = Path(sys.argv[1]), sys.argv[2] or None, sys.argv[3], int(sys.argv[4])
with Store.open(root, database_url=url, clock=FrozenClock(datetime.fromisoformat(sys.argv[5]))) as store:
    print("ready", flush=True)
    sys.stdin.readline()  # both processes start allocating at once
    ids = []
    for n in range(count):
        ids.append(store.tracking.items.add(
            "issue", "clash", title="Clash", priority="medium", estimate="1h", description=None
        ).item.id)
        ids.append(store.plans.create("Clash plan", ["step"]).id)
        ids.append(store.tracking.weekly.add("task", f"{tag} {n}").item.id)
    print(json.dumps(ids), flush=True)
"""


@pytest.mark.slow  # two real processes
def test_two_processes_allocating_at_once_never_collide(tmp_path: Path, database_url: str | None) -> None:
    root = tmp_path / "dokoro"
    count = 15
    with Store.open(root, database_url=database_url, clock=FrozenClock(START)):
        pass  # created and migrated once, before the race
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ALLOCATE, str(root), database_url or "", tag, str(count), START.isoformat()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    ids = [i for out, _ in outputs for i in json.loads(out.strip().splitlines()[-1])]
    assert len(ids) == len(set(ids)) == 6 * count
    with Store.open(root, database_url=database_url, clock=FrozenClock(START)) as store, store.db.read() as session:
        issues = set(session.exec(select(TrackingItem.id)))
        plans = set(session.exec(select(PlanRow.id)))
        weekly = list(session.exec(select(WeeklyItem)))
    assert issues == {"clash"} | {f"clash-{n}" for n in range(2, 2 * count + 1)}
    assert len(plans) == 2 * count and issues.isdisjoint(plans)
    assert sorted(row.position for row in weekly) == list(range(1, 2 * count + 1))
    assert all(row.id == f"{row.week}-{row.position}" for row in weekly)
