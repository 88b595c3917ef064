"""Recall's vector leg served from the memory vector index (``retrieval.memory_index``).

Its answer must be the vector engine's for the same scope, under every filter recall puts in the
scope, and it must follow what this process and other processes write: a remember, a forget, a
purge (which leaves no change number behind).
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.index.scope import DocScope, MemoryScope
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.documents.service import NewDocument
from dokoro_store.semantic.memories.service import MemoryDraft
from dokoro_store.semantic.memories.vectors.index import MemoryIndex

WORDS = [
    "deploy", "rollback", "gateway", "payments", "ledger", "cache", "queue", "worker", "schedule", "invoice",
    "refund", "token", "session", "retry", "timeout", "alert", "metric", "dashboard", "owner", "runbook",
    "incident", "review", "release", "branch", "staging", "canary", "proxy", "port", "database", "index",
    "migration", "backup", "restore", "vendor", "contract", "budget", "sprint",
]  # fmt: skip
TYPES = ("fact", "decision", "lesson", "rule")
ENTITIES = ("billing", "auth", "search", "ana", "bram")
K = 12


@pytest.fixture
def memories(
    root: Path, clock: FrozenClock, database_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """160 memories of four types, five entities and ages over a year (two of them deprecated, one long
    enough for several chunks) beside 40 pages, served from memory from 100 memories on."""
    monkeypatch.setattr("dokoro_store.semantic.memories.vectors.index.SERVED_FROM", 100)
    config = RetrievalConfig(embedder="static")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as store:
        rng = random.Random(7)
        drafts = [
            MemoryDraft(
                type=TYPES[i % 4],
                title=" ".join(rng.sample(WORDS, 4)),
                body=" ".join(rng.sample(WORDS, 14)) + ".",
                entities=[ENTITIES[i % 5], ENTITIES[(i * 3 + 1) % 5]],
                created_at=clock.now() - timedelta(days=(i * 37) % 400, hours=i),
            )
            for i in range(159)
        ]
        long_body = "\n\n".join(" ".join(rng.choices(WORDS, k=120)) + "." for _ in range(12))
        drafts.append(MemoryDraft(type="fact", title="The long one", body=long_body, entities=["billing"]))
        made = store.memories.remember_many(drafts)
        for memory in made[:2]:
            store.memories.forget(memory.id, reason="no longer true")
        pages = [
            NewDocument(id=f"page-{i}", content=" ".join(rng.sample(WORDS, 20)), title=f"Page {i}", doc_type="note")
            for i in range(40)
        ]
        store.docs.save_many(pages)
        store.docs.index_docs([p.id for p in pages])
        yield store


def _scopes(clock: FrozenClock) -> dict[str, DocScope]:
    def memory(**kw: Any) -> DocScope:
        return DocScope(doc_types=("memory",), memory=MemoryScope(**kw))

    return {
        "active": memory(states=("active",)),
        "every state": memory(states=("active", "archived", "deprecated", "proposed")),
        "deprecated": memory(states=("deprecated",)),
        "types": memory(types=("fact", "rule"), states=("active",)),
        "entity": memory(entity="billing", states=("active",)),
        "since": memory(since=clock.now() - timedelta(days=30), states=("active",)),
        "until": memory(until=clock.now() - timedelta(days=30), states=("active",)),
        "all at once": memory(
            types=("fact",), states=("active",), entity="ana", until=clock.now() - timedelta(days=30)
        ),
        "nothing": memory(types=("guardrail",)),
    }


def _both(store: Store, query: str, scope: DocScope, k: int = K) -> tuple[list[Any], list[Any]]:
    """(the memory index's hits, the engine's hits) as (chunk id, document id, score) lists."""
    embedder = store.embedder.get()
    assert embedder is not None
    vector = embedder.embed([query], query=True)[0]
    served = store.search.scoped_vectors
    assert isinstance(served, MemoryIndex)
    mine = served.search(vector, embedder.id, k, scope)
    assert mine is not None, "the memory index should answer this scope"
    theirs = store.search._vectors().search(vector, embedder.id, k, scope)
    return [(h.chunk_id, h.doc_id, h.score) for h in mine], [(h.chunk_id, h.doc_id, h.score) for h in theirs]


def _same(mine: list[Any], theirs: list[Any]) -> None:
    assert [h[:2] for h in mine] == [h[:2] for h in theirs]
    assert [h[2] for h in mine] == pytest.approx([h[2] for h in theirs], abs=1e-5)


def test_the_memory_index_answers_what_the_engine_answers_under_every_filter(
    memories: Store, clock: FrozenClock
) -> None:
    queries = ["deploy rollback gateway", "invoice refund ledger owner", "The long one", "canary release staging"]
    for name, scope in _scopes(clock).items():
        for query in queries:
            mine, theirs = _both(memories, query, scope)
            _same(mine, theirs)
            if name == "nothing":
                assert mine == []
            else:
                assert mine, (name, query)
    # The long memory has several chunks: each is a row, as in the engine.
    mine, theirs = _both(memories, "The long one", _scopes(clock)["every state"], k=200)
    _same(mine, theirs)
    assert len({h[1] for h in mine}) < len(mine)


def test_recall_goes_through_the_memory_index_and_finds_what_it_found_before(
    memories: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = ["deploy rollback gateway", "invoice refund ledger owner", "The long one"]
    filters: list[dict[str, Any]] = [{}, {"types": ["fact"]}, {"entity": "auth"}, {"states": ["deprecated"]}]
    served = [[m.memory.id for m in memories.memories.recall(q, count_use=False, **f)] for q in asked for f in filters]
    index = memories.search.scoped_vectors
    assert isinstance(index, MemoryIndex) and len(index) > 160  # built by those recalls
    monkeypatch.setattr(memories.search, "scoped_vectors", None)  # the engine alone, as before
    engine = [[m.memory.id for m in memories.memories.recall(q, count_use=False, **f)] for q in asked for f in filters]
    assert served == engine
    assert all(served[i] for i in range(0, len(served), 4))


def test_a_scope_not_about_memories_alone_and_a_small_store_go_to_the_engine(
    root: Path, clock: FrozenClock, database_url: str | None
) -> None:
    config = RetrievalConfig(embedder="static")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as store:
        store.memories.remember(type="fact", title="One memory", body="The gateway deploys on Fridays.")
        embedder = store.embedder.get()
        assert embedder is not None
        vector = embedder.embed(["gateway deploys"], query=True)[0]
        index = store.search.scoped_vectors
        assert isinstance(index, MemoryIndex)
        recall_scope = DocScope(doc_types=("memory",), memory=MemoryScope(states=("active",)))
        assert index.search(vector, embedder.id, 10, recall_scope) is None  # small store: no matrix
        assert len(index) == 0
        assert index.search(vector, embedder.id, 10, DocScope(doc_types=("note",))) is None
        assert index.search(vector, embedder.id, 10, DocScope(doc_types=("memory",), statuses=("active",))) is None
        assert [h.memory.title for h in store.memories.recall("gateway deploys", count_use=False)] == ["One memory"]


_ELSEWHERE = """
import sys
from pathlib import Path
from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
root, url, action, arg = sys.argv[1], sys.argv[2] or None, sys.argv[3], sys.argv[4]
with Store.open(Path(root), database_url=url, retrieval=RetrievalConfig(embedder="static")) as store:
    if action == "remember":
        print(store.memories.remember(type="fact", title=arg, body=arg + ".").memory.id)
    elif action == "forget":
        store.memories.forget(arg, reason="retired elsewhere")
    else:
        store.memories.forget(arg, purge=True, confirm=True)
"""


def _elsewhere(root: Path, database_url: str | None, action: str, arg: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _ELSEWHERE, str(root), database_url or "", action, arg],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@pytest.mark.slow  # another process writing at once
def test_the_memory_index_follows_writes_made_here_and_in_another_process(
    memories: Store, root: Path, clock: FrozenClock, database_url: str | None
) -> None:
    scopes = _scopes(clock)
    active, every = scopes["active"], scopes["every state"]
    query = "quokka ingest proxy listens on port 40001"

    def top(scope: DocScope) -> list[str]:
        mine, theirs = _both(memories, query, scope)
        _same(mine, theirs)
        return [h[1] for h in mine]

    assert top(active)  # the matrix is built now
    index = memories.search.scoped_vectors
    assert isinstance(index, MemoryIndex) and len(index) > 0

    # Remembered by another process: found on the next search.
    theirs = _elsewhere(root, database_url, "remember", "The quokka ingest proxy listens on port 40001")
    assert top(active)[0] == f"memory:{theirs}"

    # Remembered here: found too, as the top hit for its own words.
    mine = memories.memories.remember(type="fact", title="Quokka proxy port", body="The quokka proxy port is 40001.")
    assert f"memory:{mine.memory.id}" in top(active)[:2]

    # Both memories' documents are indexed from the text their rows give: none is read again later.
    assert not index.unsettled()

    # Deprecated by another process: gone from the active scope, still there among every state.
    _elsewhere(root, database_url, "forget", theirs)
    assert f"memory:{theirs}" not in top(active)
    assert top(scopes["deprecated"])[0] == f"memory:{theirs}"

    # Purged by another process (no change number left behind): gone from every scope.
    _elsewhere(root, database_url, "purge", theirs)
    assert f"memory:{theirs}" not in top(every)

    # Purged here.
    memories.memories.forget(mine.memory.id, purge=True, confirm=True)
    assert f"memory:{mine.memory.id}" not in top(every)
    assert memories.memories.recall(query, count_use=False, states=["active", "deprecated"])


@pytest.mark.slow  # another process writing at once
def test_the_gate_and_recall_here_see_a_memory_remembered_in_another_process_through_one_index(
    memories: Store, root: Path, database_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dokoro_store.semantic.memories.gate._ALL_BELOW", 50)  # 160 memories: the gate scans
    index = memories.search.memory_index
    assert memories.search.scoped_vectors is index
    memories.memories.remember(type="fact", title="Lint", body="Lint runs before every commit of the web client.")
    built = len(index)
    assert built > 160  # built by the gate, before any recall

    theirs = _elsewhere(root, database_url, "remember", "The quokka ingest proxy listens on port 40001")
    hits = memories.memories.recall("which port does the quokka ingest proxy use", count_use=False)
    assert hits[0].memory.id == theirs
    # Caught up by rev: the remember above (committed after its gate built the index) and theirs.
    assert index.holds(theirs) and len(index) == built + 2

    restated = memories.memories.remember(
        type="fact", title="Quokka ingest proxy", body="The quokka ingest proxy listens on port 40001, confirmed."
    )
    (close,) = [c for c in restated.conflicts if c.memory.id == theirs]
    assert close.semantic is not None and close.semantic > 0.8

    # Retired there: the gate here no longer pairs it, recall of every state still finds it.
    _elsewhere(root, database_url, "forget", theirs)
    again = memories.memories.remember(
        type="fact", title="Quokka proxy", body="The quokka ingest proxy listens on port 40001, checked again."
    )
    assert theirs not in {c.memory.id for c in again.conflicts}
    assert not index.holds(theirs)
    deprecated = memories.memories.recall("quokka ingest proxy port", count_use=False, states=["deprecated"])
    assert theirs in [h.memory.id for h in deprecated]
