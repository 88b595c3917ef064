"""JSON backups: human-readable, restorable without overwriting, identical after a round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.models import Question
from dokoro_store.moving.backup import apply_import, backup_document, export_store, load_backup, plan_import
from sqlmodel import select


def _fill(store: Store) -> None:
    for i in range(5):
        store.episodic.add_summary(f"s{i % 2}", "claude", f"summary {i}", key_decisions=[f"d{i}"])
    store.working.questions.add("Which cache?", context="auth", priority="high")
    store.working.workspace.claim("backup test")
    store.working.workspace.dump("checkpoint")


def test_export_writes_a_timestamped_readable_json_file(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a", database_url=database_url) as a:
        _fill(a)
        path, counts = export_store(a.db, tmp_path, a.clock.now())
    assert path.name.startswith("dokoro-backup-") and path.name.endswith("Z.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "dokoro-backup"
    assert counts["conversation_summaries"] == 5 and counts["questions"] == 1 and counts["docs"] == 1
    assert document["tables"]["questions"][0]["question"] == "Which cache?"
    assert "\n  " in path.read_text(encoding="utf-8")  # indented for people


def test_export_then_import_into_an_empty_store_is_content_identical(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill(a)
        path, _ = export_store(a.db, tmp_path, a.clock.now())
        plan = plan_import(b.db, load_backup(path))
        assert plan.duplicates == 0 and plan.conflicts == []
        assert apply_import(b.db, plan) == plan.new_rows
        assert backup_document(b.db, a.clock.now())["tables"] == load_backup(path)["tables"]


def test_importing_twice_skips_every_duplicate(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill(a)
        path, counts = export_store(a.db, tmp_path, a.clock.now())
        apply_import(b.db, plan_import(b.db, load_backup(path)))
        again = plan_import(b.db, load_backup(path))
        assert again.new_rows == 0
        assert again.duplicates == sum(counts.values())


def test_a_conflicting_fact_is_surfaced_and_not_overwritten(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill(a)
        path, _ = export_store(a.db, tmp_path, a.clock.now())
        apply_import(b.db, plan_import(b.db, load_backup(path)))
        with b.db.write() as session:
            question = session.exec(select(Question)).one()
            question.context = "changed here"
            session.add(question)
        plan = plan_import(b.db, load_backup(path))
        assert [(c.table, c.differing) for c in plan.conflicts] == [("questions", ["context"])]
        apply_import(b.db, plan)
        assert b.working.questions.list("all")[0].context == "changed here"


def test_summaries_keep_their_ids_when_free_and_get_fresh_ones_when_taken(
    tmp_path: Path, database_url: str | None
) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill(a)
        b.episodic.add_summary("local", "m", "already in b")  # takes id 1
        path, _ = export_store(a.db, tmp_path, a.clock.now())
        apply_import(b.db, plan_import(b.db, load_backup(path)))
        texts = sorted(hit.summary for hit in b.episodic.recall(limit=100))
        assert texts == sorted([*(f"summary {i}" for i in range(5)), "already in b"])


def test_a_file_that_is_not_a_backup_is_refused_clearly(tmp_path: Path) -> None:
    bogus = tmp_path / "x.json"
    bogus.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match="not a dokoro backup"):
        load_backup(bogus)
    with pytest.raises(InvalidArgumentError, match="no backup file"):
        load_backup(tmp_path / "missing.json")


def _fill_memories(store: Store) -> None:
    for i in range(4):
        store.memories.remember(
            type="fact", title=f"Fact {i}", body=f"The cache of service {i} is safe.", entities=["cache", f"s{i}"]
        )
    store.memories.close()
    # The entity graph of the memories is written behind, on a background thread; the backups of
    # these tests are of the store once it is written (an export reads table by table).
    store.graph.complete_pending()


def test_the_same_backup_twice_is_already_there_even_after_the_memories_were_used(
    tmp_path: Path, database_url: str | None
) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill(a)
        _fill_memories(a)
        path, counts = export_store(a.db, tmp_path, a.clock.now())
        apply_import(b.db, plan_import(b.db, load_backup(path)))
        # The target stamps its own change numbers (rev) and counts its own recalls.
        assert b.memories.recall(query="cache safe")
        again = plan_import(b.db, load_backup(path))
        assert again.conflicts == [] and again.new_rows == 0
        assert again.duplicates == sum(counts.values())


def test_a_memory_changed_on_one_side_is_still_a_conflict(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill_memories(a)
        path, _ = export_store(a.db, tmp_path, a.clock.now())
        apply_import(b.db, plan_import(b.db, load_backup(path)))
        document = load_backup(path)
        document["tables"]["memories"][0]["body"] = "The cache is NOT safe."
        plan = plan_import(b.db, document)
        assert [(c.table, c.differing) for c in plan.conflicts] == [("memories", ["body"])]
