"""The read path does per-call work in proportion to what it returns, not to the store.

- a search refresh looks only at documents saved since its last scan (an index range on
  ``docs.updated_at``), and still indexes every change, on both backends;
- the scoped full-text leg ranks FTS5's matches alone and checks the scope on the top rows: its
  answer is the one the scope-in-the-query ranking gives, also when the allowed documents rank low;
- the scope check of named documents finds them by id (SQLite chose the index on ``doc_type`` and
  walked every document of the type).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.index.fulltext.index import _sqlite_scoped_words
from dokoro_store.index.fulltext.planner import plan_query
from dokoro_store.index.scope import DocScope, MemoryScope
from dokoro_store.semantic.documents.service import NewDocument
from dokoro_store.semantic.memories.service import MemoryDraft
from sqlalchemy import event, text

OpenStore = Callable[..., Store]


class _Statements:
    """Every SQL statement the store's engine runs while listening."""

    def __init__(self, store: Store) -> None:
        self.seen: list[str] = []
        self._engine = store.db.engine

    def __enter__(self) -> _Statements:
        event.listen(self._engine, "before_cursor_execute", self._hear)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self._engine, "before_cursor_execute", self._hear)

    def _hear(self, _conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        self.seen.append(" ".join(statement.split()))

    def pending_scans(self) -> list[str]:
        return [s for s in self.seen if "LEFT OUTER JOIN doc_vectors" in s]


@pytest.fixture
def keyword_store(open_store: OpenStore) -> Iterator[Store]:
    yield open_store(embedder="none")


def test_a_refresh_after_the_first_reads_only_documents_saved_since(keyword_store: Store, clock: FrozenClock) -> None:
    store = keyword_store
    store.docs.save_many([NewDocument(id=f"old-{i}", content=f"old note {i} about kestrels") for i in range(30)])
    first = store.search.refresh()
    assert first.index is not None and first.index.indexed == 30
    clock.advance(timedelta(minutes=10))
    store.docs.save("fresh", "a fresh note about ospreys", title="Fresh")
    with _Statements(store) as heard:
        second = store.search.refresh()
    assert second.index is not None and second.index.indexed == 1
    scans = heard.pending_scans()
    assert scans, "the refresh looked for pending documents"
    # Every scan for pending documents is bounded: by the time of the last scan, or by named ids.
    assert all("docs.updated_at >=" in s or "docs.id IN" in s for s in scans), scans
    assert [h.doc_id for h in store.search.universal("ospreys", mode="keyword").results] == ["fresh"]
    # An edit of an old document is a change too.
    clock.advance(timedelta(minutes=1))
    store.docs.save("old-3", "old note 3, rewritten: about herons")
    again = store.search.refresh()
    assert again.index is not None and again.index.indexed == 1
    assert [h.doc_id for h in store.search.universal("herons", mode="keyword").results] == ["old-3"]
    with _Statements(store) as heard:
        quiet = store.search.refresh()
    assert quiet.index is None  # nothing changed: nothing indexed


def test_a_change_another_process_made_is_picked_up(open_store: OpenStore, clock: FrozenClock) -> None:
    reader = open_store(embedder="none")
    writer = open_store(embedder="none")
    reader.docs.save("first", "the first note about plovers")
    assert reader.search.refresh().index is not None
    clock.advance(timedelta(minutes=3))
    writer.docs.save("second", "the second note about plovers")  # saved, not indexed, by the other
    report = reader.search.refresh()
    assert report.index is not None and report.index.indexed == 1
    assert {h.doc_id for h in reader.search.universal("plovers", mode="keyword").results} == {"first", "second"}


def test_scoped_full_text_gives_the_scoped_ranking(open_store: OpenStore, database_url: str | None) -> None:
    if database_url is not None:
        pytest.skip("the two-step scoped ranking is SQLite's (FTS5)")
    store = open_store(embedder="none")
    # 300 pages that outrank the memories for the query, then memories of two types.
    store.docs.save_many(
        [NewDocument(id=f"page-{i}", content=f"harbour ferry timetable ferry harbour {i}") for i in range(300)]
    )
    store.memories.remember_many(
        [
            MemoryDraft(type="fact" if i % 2 else "lesson", title=f"ferry note {i}", body=f"the ferry leaves at {i}")
            for i in range(40)
        ]
    )
    planned = plan_query("harbour ferry timetable")
    match = planned.fts5()
    assert match is not None
    scopes = [
        DocScope(doc_types=("memory",)),
        DocScope(doc_types=("memory",), memory=MemoryScope(types=("fact",), states=("active",))),
        DocScope(doc_types=("nothing-has-this-type",)),
    ]
    for scope in scopes:
        condition, binds = scope.sql("d", "sqlite")
        for limit in (1, 5, 15, 100):
            with store.db.read() as session:
                expected = [
                    (str(r[0]), float(r[1]))
                    for r in session.execute(
                        text(
                            "SELECT d.id, bm25(docs_fts, 5.0, 1.0) AS rank FROM docs_fts "
                            "JOIN docs d ON d.rowid = docs_fts.rowid "
                            f"WHERE docs_fts MATCH :q AND {condition} ORDER BY rank, d.id LIMIT :k"
                        ).bindparams(*binds),
                        {"q": match, "k": limit},
                    )
                ]
                got = _sqlite_scoped_words(session, match, limit, scope)
            assert got == expected, (scope, limit)


def test_the_scope_check_of_named_documents_uses_their_ids(open_store: OpenStore, database_url: str | None) -> None:
    if database_url is not None:
        pytest.skip("a SQLite query plan")
    store = open_store(embedder="none")
    store.memories.remember_many([MemoryDraft(type="fact", title=f"t{i}", body=f"b{i}") for i in range(20)])
    scope = DocScope(doc_types=("memory",), memory=MemoryScope(states=("active",)))
    condition, binds = scope.sql("d", "sqlite", by_id=True)
    with store.db.read() as session:
        plan = " ".join(
            str(row[-1])
            for row in session.execute(
                text(
                    f"EXPLAIN QUERY PLAN SELECT d.id FROM docs d WHERE d.id IN ('memory:x', 'memory:y') AND {condition}"
                ).bindparams(*binds)
            )
        )
    assert "ix_docs_type_status" not in plan, plan
    kept = scope.keep(store.db, ["memory:nope", *(f"memory:{m.id}" for m in store.memories.of_types(["fact"])[:3])])
    assert len(kept) == 3


def test_a_failed_full_text_query_returns_nothing_and_leaves_the_session_usable(open_store: OpenStore) -> None:
    from dokoro_store.index.fulltext.index import _run

    store = open_store(embedder="none")
    store.docs.save_many([NewDocument(id="page-1", content="kestrel")])
    with store.db.read() as session:
        assert _run(session, "SELECT no_such_column FROM no_such_table", {}, "a broken") == []
        # On PostgreSQL the failure would abort the transaction without its savepoint.
        assert session.execute(text("SELECT id FROM docs")).scalars().all() == ["page-1"]


def test_a_recall_over_memories_runs_no_savepoint_on_sqlite_and_checks_the_scope_once(
    open_store: OpenStore, database_url: str | None
) -> None:
    store = open_store(embedder="hashing", vector_engine="exact")
    store.memories.remember_many(
        [MemoryDraft(type="fact", title=f"ferry note {i}", body=f"the harbour ferry leaves at {i}") for i in range(30)]
    )
    with _Statements(store) as heard:
        hits = store.memories.recall("harbour ferry timetable", limit=5)
    assert len(hits) == 5
    if database_url is None:
        assert not [s for s in heard.seen if "SAVEPOINT" in s.upper()]
    # Every leg is scoped already; with no thread neighbours the fused list is not checked again:
    # the one check left is the vector leg's own (its plain list of nearest documents).
    checks = [
        s
        for s in heard.seen
        if s.startswith(
            (
                "SELECT d.id FROM docs d WHERE d.id IN (SELECT value FROM json_each(",
                "SELECT d.id FROM docs d WHERE d.id = ANY(",
            )
        )
    ]
    assert len(checks) == 1, checks
    # Use counting is one statement.
    updates = [s for s in heard.seen if s.startswith("UPDATE memories SET recall_count")]
    assert len(updates) == 1, updates
