"""dokoro_recall's filters are conditions of the search, not a filter of a global top-k.

One memory lives among 500 documents that outrank it for the query (full text and vectors alike);
recall still returns it under every filter, on both backends, through each vector path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.index.scope import DocScope, scoped_nearest
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.documents.service import NewDocument
from dokoro_store.semantic.memories.service import MemoryDraft
from dokoro_store.semantic.search.service import SEARCH_MODES

QUERY = "payments gateway rollback deploy"


@pytest.fixture(params=["prefilter", "widening"])
def crowded(
    request: pytest.FixtureRequest,
    root: Path,
    clock: FrozenClock,
    database_url: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Store, dict[str, str]]]:
    """A store of 500 pages about the query and five memories that match it less well."""
    if request.param == "widening":
        # No prefilter list: the vector engines widen their neighbour list until enough are allowed.
        monkeypatch.setattr("dokoro_store.index.scope.PREFILTER_CAP", 0)
    config = RetrievalConfig(embedder="static")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as store:
        pages = [
            NewDocument(
                id=f"page-{i}",
                content=f"Payments gateway rollback deploy, runbook {i}: deploy the payments gateway, "
                "then rollback the payments gateway deploy when the gateway fails.",
                title=f"Payments gateway rollback deploy {i}",
                doc_type="note",
            )
            for i in range(500)
        ]
        store.docs.save_many(pages)
        store.docs.index_docs([p.id for p in pages])

        def draft(kind: str, entity: str, age_days: int, title: str) -> MemoryDraft:
            return MemoryDraft(
                type=kind,
                title=title,
                body=f"{title}. The payments team agreed on it after the last incident review.",
                entities=[entity],
                created_at=clock.now() - timedelta(days=age_days),
            )

        made = store.memories.remember_many(
            [
                draft("decision", "payments", 0, "Keep the gateway rollback behind a flag"),
                draft("fact", "payments", 0, "The gateway rollback takes four minutes"),
                draft("decision", "billing", 0, "Billing rollback goes through the gateway queue"),
                draft("decision", "payments", 40, "Rollback of the gateway was manual in spring"),
                draft("decision", "payments", 0, "Gateway rollback needs two approvals"),
            ]
        )
        ids = dict(zip(["target", "fact", "billing", "old", "dropped"], [m.id for m in made], strict=True))
        store.memories.forget(ids["dropped"], reason="approvals were removed")
        yield store, ids


def _found(store: Store, **filters: object) -> list[str]:
    return [hit.memory.id for hit in store.memories.recall(QUERY, limit=10, count_use=False, **filters)]  # type: ignore[arg-type]


def test_recall_finds_a_memory_that_500_pages_outrank_under_every_filter(
    crowded: tuple[Store, dict[str, str]],
) -> None:
    store, ids = crowded
    start = store.clock.now()
    # A global top 100 holds pages only: a filter applied after it would find nothing.
    top = store.search.universal(QUERY, limit=100)
    assert len(top.results) == 100
    assert not [hit for hit in top.results if hit.doc_type == "memory"]

    assert ids["target"] in _found(store)

    by_type = _found(store, types=["decision"])
    assert ids["target"] in by_type and ids["fact"] not in by_type

    by_entity = _found(store, entity="Payments")
    assert ids["target"] in by_entity and ids["billing"] not in by_entity

    recent = _found(store, since=(start - timedelta(days=1)).isoformat())
    assert ids["target"] in recent and ids["old"] not in recent
    older = _found(store, until=(start - timedelta(days=10)).isoformat())
    assert older == [ids["old"]]

    assert ids["dropped"] not in _found(store)
    assert _found(store, states=["deprecated"]) == [ids["dropped"]]

    everything = _found(store, types=["decision"], entity="payments", since=(start - timedelta(days=1)).isoformat())
    assert everything == [ids["target"]]

    # search_universal takes the same scope inside each of its legs.
    for mode in SEARCH_MODES:
        found = store.search.universal(QUERY, limit=5, mode=mode, scope=DocScope(doc_types=("memory",)))
        doc_ids = [hit.doc_id for hit in found.results]
        assert doc_ids and all(d.startswith("memory:") for d in doc_ids), mode
        assert f"memory:{ids['target']}" in doc_ids, mode


def test_scoped_nearest_prefilters_few_allowed_documents_and_widens_for_many(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.docs.save_many([NewDocument(id=f"d{i}", content=f"text {i}", doc_type="note") for i in range(30)])
    store.docs.save_many([NewDocument(id=f"k{i}", content=f"kept {i}", doc_type="keep") for i in range(5)])
    ranked = [f"d{i}" for i in range(30)] + [f"k{i}" for i in range(5)]  # the kept ones are nearest last
    calls: list[tuple[int, list[str] | None]] = []

    def search(n: int, allowed: Sequence[str] | None) -> list[str]:
        calls.append((n, None if allowed is None else sorted(allowed)))
        return [d for d in ranked if allowed is None or d in allowed][:n]

    scope = DocScope(doc_types=("keep",))
    assert scoped_nearest(store.db, scope, 3, search, str, len(ranked)) == ["k0", "k1", "k2"]
    assert calls == [(6, None), (3, [f"k{i}" for i in range(5)])]  # plain list first, then the prefilter

    calls.clear()
    monkeypatch.setattr("dokoro_store.index.scope.PREFILTER_CAP", 2)  # too many for a prefilter list
    assert scoped_nearest(store.db, scope, 3, search, str, len(ranked)) == ["k0", "k1", "k2"]
    assert calls == [(6, None), (24, None), (35, None)]  # widened until three allowed ones are in it

    calls.clear()
    assert scoped_nearest(store.db, DocScope(doc_types=("note",)), 3, search, str, len(ranked)) == ["d0", "d1", "d2"]
    assert calls == [(6, None)]  # most documents allowed: the plain list already holds the answer
