"""The conflict gate: which pairs it shows, calibrated per embedder, and how it finds them at scale.

The pairs below are the calibration set of ``services/memories/gate.py``'s thresholds: the same fact
restated in other words, two facts that contradict each other, and unrelated facts (some about the
same entity). Every restatement and contradiction must be shown, no unrelated pair may be, with
each embedder ``auto`` can resolve to offline (ONNX MiniLM, the static model, the hashing floor).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_store import Store
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryEntity
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.gate import THRESHOLDS
from dokoro_store.semantic.memories.service import MemoryDraft
from sqlmodel import select

# (kind, entities of the first, the first, entities of the second, the second)
PAIRS: list[tuple[str, list[str], str, list[str], str]] = [
    # the same fact, restated
    (
        "same",
        ["auth/session.ts"],
        "auth/session.ts keeps login sessions as stateless JWT tokens",
        ["auth/session.ts"],
        "Login sessions in auth/session.ts are stored as stateless JWTs",
    ),
    (
        "same",
        ["postgres"],
        "The staging database runs PostgreSQL 16 on port 5433",
        ["postgres"],
        "Staging uses Postgres 16, listening on port 5433",
    ),
    (
        "same",
        [],
        "Always run the test suite with pytest -x before pushing a branch",
        [],
        "Before pushing any branch, run pytest -x over the whole test suite",
    ),
    (
        "same",
        ["alice"],
        "Alice prefers tabs over spaces for indentation in Go files",
        ["alice"],
        "For Go code, Alice wants indentation with tabs rather than spaces",
    ),
    (
        "same",
        ["billing"],
        "Invoices are generated nightly at 02:00 UTC by the billing cron job",
        ["billing"],
        "The billing cron job creates the invoices every night at 2am UTC",
    ),
    (
        "same",
        [],
        "The frontend is deployed to Vercel from the main branch automatically",
        [],
        "Every push to main automatically deploys the frontend on Vercel",
    ),
    # contradicting facts
    (
        "contradict",
        ["auth/session.ts"],
        "auth/session.ts keeps login sessions as stateless JWT tokens",
        ["auth/session.ts"],
        "auth/session.ts keeps login sessions as signed session cookies now",
    ),
    (
        "contradict",
        ["postgres"],
        "The staging database runs PostgreSQL 16 on port 5433",
        ["postgres"],
        "The staging database runs PostgreSQL 15 on port 5432",
    ),
    (
        "contradict",
        ["alice"],
        "Alice prefers tabs over spaces for indentation in Go files",
        ["alice"],
        "Alice prefers spaces over tabs for indentation in Go files",
    ),
    (
        "contradict",
        ["billing"],
        "Invoices are generated nightly at 02:00 UTC by the billing cron job",
        ["billing"],
        "Invoices are generated weekly on Mondays by the billing cron job",
    ),
    (
        "contradict",
        [],
        "The API rate limit is 100 requests per minute per user",
        [],
        "The API rate limit is 1000 requests per minute per user",
    ),
    (
        "contradict",
        ["redis"],
        "We use Redis for the job queue",
        ["redis"],
        "The job queue no longer uses Redis; it moved to PostgreSQL SKIP LOCKED",
    ),
    # unrelated facts (some about the same entity)
    (
        "unrelated",
        ["auth/session.ts"],
        "auth/session.ts keeps login sessions as stateless JWT tokens",
        ["auth/session.ts"],
        "auth/session.ts has a flaky test on leap years",
    ),
    (
        "unrelated",
        ["postgres"],
        "The staging database runs PostgreSQL 16 on port 5433",
        ["billing"],
        "Invoices are generated nightly at 02:00 UTC by the billing cron job",
    ),
    (
        "unrelated",
        [],
        "Alice prefers tabs over spaces for indentation in Go files",
        [],
        "The frontend is deployed to Vercel from the main branch automatically",
    ),
    (
        "unrelated",
        ["redis"],
        "We use Redis for the job queue",
        ["redis"],
        "Redis is also the cache for rendered markdown previews, with a 10 minute TTL",
    ),
    (
        "unrelated",
        [],
        "The API rate limit is 100 requests per minute per user",
        [],
        "Bob is on holiday until the 14th; ask Carol for reviews",
    ),
    (
        "unrelated",
        ["ci"],
        "CI runs on GitHub Actions with a matrix of Python 3.11 and 3.12",
        ["ci"],
        "The CI badge in the README links to the wrong workflow",
    ),
]
VOCABULARY = {w.lower().strip(".,;") for _k, _e, first, _f, second in PAIRS for w in f"{first} {second}".split()}
VOCABULARY |= {f"word{i}" for i in range(200)}


@pytest.fixture(params=["onnx", "static", "hashing"])
def gate_store(request: pytest.FixtureRequest, tmp_path: Path, clock) -> Iterator[Store]:
    with Store.open(tmp_path / "dokoro", clock=clock, retrieval=RetrievalConfig(embedder=request.param)) as opened:
        yield opened


def _remember(store: Store, body: str, entities: list[str]):
    return store.memories.remember(type="fact", title=body[:60], body=body, entities=entities)


def test_the_gate_shows_restatements_and_contradictions_and_no_unrelated_pair(gate_store: Store) -> None:
    kind = gate_store.embedder.status().kind
    assert kind in THRESHOLDS
    wrong = []
    for expected, first_entities, first, second_entities, second in PAIRS:
        old = _remember(gate_store, first, first_entities)
        new = _remember(gate_store, second, second_entities)
        shown = [c for c in new.conflicts if c.memory.id == old.memory.id]
        should_show = expected != "unrelated"
        if bool(shown) != should_show:
            wrong.append((expected, second, new.conflicts))
        for memory in (old.memory, new.memory):
            gate_store.memories.forget(memory.id, purge=True, confirm=True)
    assert not wrong, f"{kind}: {wrong}"


def test_the_answer_carries_both_memories_in_full_with_both_signals(any_store: Store) -> None:
    old = _remember(any_store, "The staging database runs PostgreSQL 16 on port 5433", ["postgres"])
    new = _remember(any_store, "The staging database runs PostgreSQL 15 on port 5432", ["postgres"])

    (close,) = new.conflicts
    assert close.memory.model_dump() == any_store.memories.get(old.memory.id).model_dump()
    assert close.memory.body == "The staging database runs PostgreSQL 16 on port 5433"
    assert new.memory.body == "The staging database runs PostgreSQL 15 on port 5432"
    assert close.shared_entities == ["postgres"]
    assert close.semantic is not None and close.semantic > 0.5
    assert close.similarity == close.semantic
    assert 0.5 < close.lexical < 1.0


def test_the_gate_finds_its_neighbours_among_many_memories_by_nearest_neighbour_search(
    tmp_path: Path, clock, database_url: str | None
) -> None:
    # More active memories than the gate compares one by one: it asks the vector engine.
    with Store.open(
        tmp_path / "dokoro", database_url=database_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")
    ) as store:
        rng, words = random.Random(7), sorted(VOCABULARY)
        fillers = [
            MemoryDraft(
                type="fact",
                title=f"Note {i}",
                body=" ".join(rng.sample(words, 9)),
                entities=[f"service-{i}"],
            )
            for i in range(260)
        ]
        store.memories.remember_many(fillers)
        old = _remember(store, "The API rate limit is 100 requests per minute per user", [])
        new = _remember(store, "The API rate limit is 1000 requests per minute per user", [])
        restated = " ".join(reversed(fillers[17].body.split()))
        sharing = _remember(store, restated, ["service-17"])

        assert [c.memory.id for c in new.conflicts] == [old.memory.id]
        assert [c.memory.title for c in sharing.conflicts] == ["Note 17"]
        assert sharing.conflicts[0].shared_entities == ["service-17"]


def test_memory_entities_follow_remember_import_and_purge(any_store: Store) -> None:
    one = _remember(any_store, "Deploys go through the release train on Tuesdays", ["Release Train", "deploys"])
    (imported,) = any_store.memories.remember_many(
        [
            MemoryDraft(
                type="fact", title="Imported", body="The release train is paused in August", entities=["release train"]
            )
        ]
    )

    def pairs() -> set[tuple[str, str]]:
        with any_store.db.read() as session:
            return {(r.memory_id, r.entity) for r in session.exec(select(MemoryEntity)).all()}

    assert pairs() == {(one.memory.id, "release train"), (one.memory.id, "deploys"), (imported.id, "release train")}
    any_store.memories.forget(one.memory.id, purge=True, confirm=True)
    assert pairs() == {(imported.id, "release train")}


def test_the_gates_matrix_of_active_memories_follows_changes_made_here_and_in_another_process(
    tmp_path: Path, clock, database_url: str | None
) -> None:
    # Past the one-by-one limit the gate scans a matrix of the active memories' vectors; it must
    # see what was retired, purged, superseded, or written by another process since it was built.
    settings = {"database_url": database_url, "clock": clock, "retrieval": RetrievalConfig(embedder="hashing")}
    with Store.open(tmp_path / "dokoro", **settings) as store, Store.open(tmp_path / "dokoro", **settings) as other:
        rng, words = random.Random(11), sorted(VOCABULARY)
        fillers = [
            MemoryDraft(type="fact", title=f"Note {i}", body=" ".join(rng.sample(words, 9)), entities=[f"svc-{i}"])
            for i in range(260)
        ]
        store.memories.remember_many(fillers)
        first = _remember(store, "The API rate limit is 100 requests per minute per user", [])
        assert [
            c.memory.id
            for c in _remember(store, "The API rate limit is 1000 requests per minute per user", []).conflicts
        ] == [first.memory.id]

        # Written by another process after this one built its matrix: found.
        theirs = _remember(other, "Staging deploys need a green build of the release branch", [])
        mine = _remember(store, "Staging deploys need a green build of the release branches", [])
        assert [c.memory.id for c in mine.conflicts] == [theirs.memory.id]

        # Retired elsewhere: no longer a neighbour.
        other.memories.forget(theirs.memory.id, reason="wrong")
        other.memories.forget(mine.memory.id, reason="wrong")
        again = _remember(store, "Staging deploys need a green build of the release branch first", [])
        assert again.conflicts == []

        # Purged (its row deleted, no change number left behind): dropped from the matrix too.
        store.memories.forget(again.memory.id, purge=True, confirm=True)
        last = _remember(store, "Staging deploys need a green build of the release branch, first", [])
        assert last.conflicts == []
        index = store.search.memory_index
        assert len(index) > 260 and not index.holds(again.memory.id)


def test_a_text_changed_in_place_enters_the_gates_matrix_with_its_new_vectors(
    tmp_path: Path, clock, database_url: str | None
) -> None:
    # `dokoro memory reindex` commits a changed text, then indexes it: a gate that catches up in
    # between must not take the old text's vectors for the new text (re-indexing leaves no change
    # number behind, so they would stay), and must take the new ones once they are written.
    settings = {"database_url": database_url, "clock": clock, "retrieval": RetrievalConfig(embedder="hashing")}
    with Store.open(tmp_path / "dokoro", **settings) as store:
        rng, words = random.Random(5), sorted(VOCABULARY)
        store.memories.remember_many(
            [
                MemoryDraft(type="fact", title=f"Note {i}", body=" ".join(rng.sample(words, 9)), entities=[f"svc-{i}"])
                for i in range(260)
            ]
        )
        changed = _remember(store, "The API rate limit is 100 requests per minute per user", []).memory
        _remember(store, "Lint runs before every commit of the web client", [])  # the matrix is built
        new_text = "Staging deploys need a green build of the release branch"
        with store.db.write() as session:  # as another process would, through the repository
            row = session.get(MemoryRow, changed.id)
            assert row is not None
            repository.rewrite(session, row, {"title": new_text, "body": new_text})

        # Caught up before the new text is indexed: the memory waits, its old vectors unused.
        _remember(store, "Nightly backups are kept for thirty days", [])
        index = store.search.memory_index
        assert not index.holds(changed.id) and changed.id in index.unsettled()

        # Indexed: it enters with the new text's vectors, and the gate pairs a restatement with it.
        with store.db.read() as session:
            row = session.get(MemoryRow, changed.id)
        assert row is not None
        store.memories._index_many([row])
        restated = _remember(store, "Staging deploys need a green build of the release branches", [])
        assert index.holds(changed.id)
        assert [c.memory.id for c in restated.conflicts] == [changed.id]
