"""The files hold everything a rebuild needs (issue 46 item 1): ``depends_on`` in the front matter, the
verdicts, purges and use counters in the committed ledger (``memories/ledger/``), so a rebuild from the
files alone brings links and ledger back, forward only; and the read-only status and briefing say
plainly what they have not read (item 2), a broken file named on every call until it is fixed. Both
backends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dokoro_store import FrozenClock, Store
from dokoro_store.briefing import build_briefing
from dokoro_store.models.memories import MemoryConflict, MemoryLink
from sqlmodel import select


def _fact(store: Store, title: str, body: str, **extra: object) -> str:
    return store.memories.remember(type="fact", title=title, body=body, **extra).memory.id  # type: ignore[arg-type]


def _drop_database(url: str) -> None:
    """Drop the PostgreSQL database of ``url`` and make it again, empty at the current schema."""
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    admin = parsed.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE "{parsed.database}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{parsed.database}" TEMPLATE "dokoro_template"')


def _lose_database(root: Path, database_url: str | None) -> None:
    """Everything but the files: the database and the folder's .dokoro/ (its manifest) are gone."""
    shutil.rmtree(root / ".dokoro")
    if database_url is not None:
        _drop_database(database_url)


def test_links_verdicts_purges_and_use_counters_come_back_from_the_files_alone(
    root: Path, clock: FrozenClock, database_url: str | None
) -> None:
    with Store.open(root, database_url=database_url, clock=clock) as store:
        base = _fact(store, "Postgres 16", "The team database is PostgreSQL 16.")
        replicas = _fact(store, "Replicas", "Two read replicas follow the primary.", depends_on=[base])
        old = _fact(store, "Deploy by script", "Deploys run the blue-green script.")
        new = _fact(store, "Deploy by pipeline", "Deploys run in the CI pipeline.")
        store.memories.verdict(new, old, "keep_both", agent_id="carol")
        purged = _fact(store, "A secret place", "Written by mistake.")
        store.memories.forget(purged, purge=True, confirm=True)
        for _ in range(3):
            store.memories.recall("read replicas follow the primary")
        counts = {m: store.memories.get(m).recall_count for m in (base, replicas, old, new)}
        store.memories.sync_files()  # a person's explicit sync: the ledger written now
        ledger = root / "memories" / "ledger"
        assert (ledger / "verdicts.jsonl").is_file() and (ledger / "purged.jsonl").is_file()
        assert f"depends_on: [{base}]" in next((root / "memories" / "fact").glob(f"{replicas}-*.md")).read_text()
    assert counts[replicas] == 3
    _lose_database(root, database_url)
    stale = root / "memories" / "fact" / f"{purged}-a-secret-place.md"  # a stale copy comes back with a merge
    stale.write_text(f"---\nid: {purged}\ntype: fact\nrevision: 1\n---\n# A secret place\n\nWritten by mistake.\n")

    with Store.open(root, database_url=database_url, clock=clock) as fresh:
        report = fresh.memories.reindex_from_files()

        assert (report.restored, report.links, report.verdicts, report.purges, report.removed) == (4, 1, 1, 1, 1)
        with fresh.db.read() as session:
            links = session.exec(select(MemoryLink.memory_id, MemoryLink.depends_on)).all()
            pair = session.exec(select(MemoryConflict)).one()
        assert [tuple(link) for link in links] == [(replicas, base)]
        assert (pair.new_id, pair.old_id, pair.verdict, pair.decided_by) == (new, old, "keep_both", "carol")
        assert {m: fresh.memories.get(m).recall_count for m in counts} == counts
        assert not stale.exists()
        again = fresh.memories.reindex_from_files()  # forward only: nothing twice, nothing lowered
        assert (again.links, again.verdicts, again.uses, again.restored) == (0, 0, 0, 0)


def test_use_counters_in_the_ledger_only_go_up(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Ports", "The api listens on 8080.")
    any_store.memories.recall("api listens")
    any_store.memories.sync_files()
    shard = next((root / "memories" / "ledger" / "uses").glob("*.jsonl"))
    entry = json.loads(shard.read_text().splitlines()[0])
    assert (entry["id"], entry["uses"]) == (memory, 1)
    shard.write_text(json.dumps({**entry, "uses": 0}) + "\n" + json.dumps({"id": "x", "uses": 2**70}) + "\n")
    any_store.memories.reindex_from_files()
    assert any_store.memories.get(memory).recall_count == 1
    shard.write_text(json.dumps({**entry, "uses": 7}) + "\n")
    report = any_store.memories.reindex_from_files()
    assert (report.uses, any_store.memories.get(memory).recall_count) == (1, 7)


def test_a_hostile_ledger_is_reported_line_by_line_and_never_stops_the_rebuild(
    any_store: Store, root: Path, tmp_path: Path
) -> None:
    kept = _fact(any_store, "Kept", "A memory that stays.")
    ledger = root / "memories" / "ledger"
    ledger.mkdir(parents=True, exist_ok=True)
    (ledger / "verdicts.jsonl").write_text(
        "not json\n" + "[" * 5000 + "\n" + json.dumps({"new": kept, "old": kept, "verdict": "explode"}) + "\n"
    )
    (ledger / "purged.jsonl").write_text(json.dumps({"id": "../../etc/passwd", "revision": 1, "at": "2026-01-01"}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "2026-06.jsonl").write_text(json.dumps({"id": kept, "uses": 99}) + "\n")
    (ledger / "uses").symlink_to(outside, target_is_directory=True)

    report = any_store.memories.reindex_from_files()

    reasons = {p.path: p.reason for p in report.problems}
    assert "line 1 is not a ledger entry" in reasons["memories/ledger/verdicts.jsonl"]
    assert (report.verdicts, report.purges, report.uses) == (0, 0, 0)
    assert any_store.memories.get(kept).recall_count == 0  # nothing read through the link
    assert (report.unchanged, report.skipped) == (1, len({p.path for p in report.problems}))


# ---------------------------------------------------------------------- status that tells the truth
def test_status_and_briefing_say_what_they_have_not_read_and_a_broken_file_is_named_until_fixed(
    any_store: Store, root: Path
) -> None:
    _fact(any_store, "Seed", "A first memory makes the folders.")
    folder = root / "memories" / "fact"
    (folder / "hand.md").write_text("# Hand written\n\nWritten by a person.\n", encoding="utf-8")
    broken = folder / "broken.md"
    broken.write_text("---\ntype: fact\n# Broken\n\nThe front matter never closes.\n", encoding="utf-8")

    check = any_store.memories.status(reconcile=False).files_check
    briefing = build_briefing(any_store).render()

    assert check is not None and not check.in_step and "in step" not in check.message
    assert check.unread == 2 and "2 new" in check.message
    listed = {p.path: p.reason for p in check.unread_files}
    assert listed["memories/fact/hand.md"] == "new, not read yet"
    assert "never closes" in listed["memories/fact/broken.md"]
    assert "memory files: 2 changed since they were last read" in briefing

    answers = [any_store.memories.recall_answer("written by a person") for _ in range(3)]

    assert answers[0].hits[0].memory.title == "Hand written"
    for answer in answers:  # named on every call, not only the one that read it
        assert (
            answer.files is not None
            and "never closes" in {p.path: p.reason for p in answer.files.problems}["memories/fact/broken.md"]
        )
    check = any_store.memories.status(reconcile=False).files_check
    assert check is not None and check.in_step and check.unread == 0 and check.not_read == 1
    assert [p.path for p in check.not_read_files] == ["memories/fact/broken.md"]
    assert "hold no memory until fixed" in (any_store.memories.files_unread() or "")

    broken.write_text("---\ntype: fact\n---\n# Fixed\n\nThe front matter closes now.\n", encoding="utf-8")
    fixed = any_store.memories.recall_answer("front matter closes")
    assert fixed.files is not None and not fixed.files.problems
    check = any_store.memories.status(reconcile=False).files_check
    assert check is not None and (check.not_read, check.in_step) == (0, True)
    assert "in step with the rows" in check.message and any_store.memories.files_unread() is None


def test_an_edit_in_place_is_told_by_the_status_of_a_small_folder(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Timeouts", "The client times out after thirty seconds.")
    path = next((root / "memories" / "fact").glob(f"{memory}-*.md"))
    with path.open("r+", encoding="utf-8") as handle:  # in place: the folder's time does not move
        text = handle.read().replace("thirty", "sixty, really")
        handle.seek(0)
        handle.write(text)

    check = any_store.memories.status(reconcile=False).files_check

    assert check is not None and check.unread == 1 and "1 edited" in check.message
    assert any_store.memories.get(memory).body == "The client times out after thirty seconds."  # read only
