"""Moving a store between SQLite and PostgreSQL: complete, idempotent, verified."""

from __future__ import annotations

from pathlib import Path

from dokoro_store import Store
from dokoro_store.moving.transfer import copy_store, read_rows, store_tables


def _fill(store: Store) -> None:
    for i in range(230):  # more than one copy batch
        store.episodic.add_summary(f"s{i % 3}", "m", f"summary {i} — ünïcødé", key_topics=["x", str(i)])
    store.working.questions.add("Is the cache safe?", context="auth", priority="blocker")
    store.working.workspace.claim("move the store")
    store.working.workspace.dump("before the move")
    store.tokens.create("alice")
    # The entity graph is written behind the dump's index write: complete it now, so the source
    # does not change under the comparison below (a copy made earlier carries the marks).
    store.graph.complete_pending()


def _tables(store: Store) -> dict[str, list[dict[str, object]]]:
    return {table.name: read_rows(store.db, table) for table in store_tables()}


def test_sqlite_to_postgres_and_back_is_field_for_field_identical(tmp_path: Path, postgres_url: str) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=postgres_url) as b:
        _fill(a)
        there = copy_store(a.db, b.db)
        assert all(r.verified and r.source_rows == r.target_rows for r in there)
        assert {r.table for r in there} == {t.name for t in store_tables()}
        with Store.open(tmp_path / "c") as c:
            back = copy_store(b.db, c.db)
            assert all(r.verified for r in back)
            assert _tables(c) == _tables(a)
        # The source was only read.
        assert sum(r.source_rows for r in there) == sum(len(rows) for rows in _tables(a).values())


def test_copying_twice_changes_nothing_and_keeps_the_target_writable(tmp_path: Path, postgres_url: str) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=postgres_url) as b:
        _fill(a)
        copy_store(a.db, b.db)
        before = _tables(b)
        again = copy_store(a.db, b.db)
        assert all(r.verified for r in again)
        assert _tables(b) == before
        # Explicit ids were copied in: the PostgreSQL sequence must have moved past them.
        added = b.episodic.add_summary("after", "m", "written after the move")
        assert added.id > max(int(row["id"]) for row in before["conversation_summaries"])


def test_rows_only_in_the_target_are_kept(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        b.working.questions.add("already here")
        a.working.questions.add("from the source")
        reports = {r.table: r for r in copy_store(a.db, b.db)}
        assert reports["questions"].source_rows == 1
        assert reports["questions"].target_rows == 2
        assert reports["questions"].verified
        assert {q.question for q in b.working.questions.list("all")} == {"already here", "from the source"}


def test_progress_is_reported_per_table(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b") as b:
        _fill(a)
        copy_store(a.db, b.db, progress=lambda table, done, total: seen.append((table, done, total)))
    final = {table: (done, total) for table, done, total in seen}
    assert final["conversation_summaries"] == (230, 230)
    assert ("conversation_summaries", 0, 230) in seen


def test_two_stores_moved_into_one_keep_every_summary(tmp_path: Path, database_url: str | None) -> None:
    with (
        Store.open(tmp_path / "alice") as alice,
        Store.open(tmp_path / "bob") as bob,
        Store.open(tmp_path / "team", database_url=database_url) as team,
    ):
        alice.episodic.add_summary("alice-1", "m", "alice fixed the login race")
        bob.episodic.add_summary("bob-1", "m", "bob moved sessions to cookies")  # the same id 1 as alice's
        assert all(r.verified for r in copy_store(alice.db, team.db))
        assert all(r.verified for r in copy_store(bob.db, team.db))
        assert all(r.verified for r in copy_store(alice.db, team.db))  # again: nothing duplicated
        texts = sorted(hit.summary for hit in team.episodic.recall(limit=10))
    assert texts == ["alice fixed the login race", "bob moved sessions to cookies"]


def _fill_semantic(store: Store) -> None:
    """Memories with entities (memory_entities: a table whose every column is its key) and a graph
    with relations, as a store that has been used for a while holds them."""
    store.memories.remember(
        type="fact",
        title="The team database",
        body="The team server runs PostgreSQL 16.",
        entities=["postgres", "team"],
    )
    store.memories.remember(
        type="decision", title="Packaging", body="The workspace is packaged with uv.", entities=["uv"]
    )
    auth = store.graph.upsert_entity("service", "AuthService").id
    db = store.graph.upsert_entity("service", "SessionStore").id
    store.graph.upsert_relation(auth, db, "depends_on", valid_from="2026-05-19T10:00:00Z")
    store.working.workspace.claim("graph")
    store.working.workspace.dump("AuthService depends on SessionStore in src/auth/session.py")
    store.graph.complete_pending()
    store.memories.close()  # the memory files written behind the remembers are on disk


def test_a_store_with_memories_and_entities_moves_both_ways_verified_and_a_rerun_copies_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=postgres_url) as b:
        _fill_semantic(a)
        there = {r.table: r for r in copy_store(a.db, b.db)}
        assert all(r.verified for r in there.values()), [r.table for r in there.values() if not r.verified]
        assert there["memories"].source_rows == 2 and there["memory_entities"].target_rows == 3
        assert there["entity_relations"].target_rows >= 1
        after_first = _tables(b)
        again = copy_store(a.db, b.db)
        assert all(r.verified for r in again) and sum(r.copied for r in again) == 0
        assert _tables(b) == after_first  # not even a memory's rev moved
        with Store.open(tmp_path / "c") as c:
            back = {r.table: r for r in copy_store(b.db, c.db)}
            assert all(r.verified for r in back.values())
            assert back["memories"].target_rows == 2
            assert {m.title for m in c.memories.of_types(["fact", "decision"])} == {"The team database", "Packaging"}
            assert sum(r.copied for r in copy_store(b.db, c.db)) == 0


def test_a_memory_changed_in_the_source_is_copied_again_and_verifies(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b", database_url=database_url) as b:
        _fill_semantic(a)
        assert all(r.verified for r in copy_store(a.db, b.db))
        (memory,) = [m for m in a.memories.of_types(["fact"])]
        a.memories.forget(memory.id, reason="moved to a managed database")
        reports = {r.table: r for r in copy_store(a.db, b.db)}
        assert reports["memories"].verified and reports["memories"].copied == 1
        assert b.memories.get(memory.id).state == a.memories.get(memory.id).state != "active"
