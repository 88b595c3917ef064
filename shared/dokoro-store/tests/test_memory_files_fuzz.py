"""Property tests of the memory files: any row reads back from its file as it is (untouched files change
nothing), and any hostile file (ids that are paths, forged agents, trusts and states, deep or huge front
matter, bytes that are no text, links) in another agent's folder on the same database is at most one
file skipped: nothing escapes, no row gets an unsafe id, no other agent's memory is changed or spoken
for; each case within a bound on time and memory.

``DOKORO_FUZZ_EXAMPLES=N`` sets the examples of the hostile-file test (CI's are fixed; ``DOKORO_FUZZ_RANDOM=1``
draws new ones). The PostgreSQL variant is marked slow.
"""

from __future__ import annotations

import os
import shutil
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from dokoro_store import FrozenClock, RetrievalConfig, Store
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.files.markdown import (
    fields_digest,
    fields_of_row,
    parse_memory_file,
    render_memory,
)
from dokoro_store.semantic.memories.rows import MEMORY_TYPES, STATES, TRUST_LEVELS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import select

# The fast suite runs a few cases; the slow one more, and on PostgreSQL too.
EXAMPLES = int(os.environ.get("DOKORO_FUZZ_EXAMPLES", "4"))
SLOW_EXAMPLES = int(os.environ.get("DOKORO_FUZZ_EXAMPLES", "25"))
POSTGRES_EXAMPLES = int(os.environ.get("DOKORO_FUZZ_EXAMPLES", "4"))
DERANDOMIZE = os.environ.get("DOKORO_FUZZ_RANDOM", "") != "1"
# Per case: generous (the machine may be loaded: a hang or a blow-up fails, not slowness).
CASE_SECONDS = 30.0
CASE_BYTES = 96 * 1024 * 1024
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)

# ---------------------------------------------------------------------- a row reads back as it is
_times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)).map(
    lambda d: d.replace(microsecond=0)
)
_words = st.text(min_size=1, max_size=120).filter(lambda t: " ".join(t.split()) != "")
_names = st.text(alphabet=st.characters(categories=("L", "N"), include_characters="-_.@ "), min_size=1, max_size=40)


@st.composite
def _rows(draw: st.DrawFn) -> tuple[MemoryRow, tuple[str, ...]]:
    created = draw(_times)
    row = MemoryRow(
        id=repository.new_id(created),
        type=draw(st.sampled_from(MEMORY_TYPES)),
        title=draw(_words.filter(lambda t: len(" ".join(t.split())) <= 300)),
        body=draw(st.text(min_size=1, max_size=400).filter(lambda t: t.strip() != "")),
        entities=draw(st.lists(_words, max_size=5)),
        trust=draw(st.sampled_from(TRUST_LEVELS)),
        state=draw(st.sampled_from(STATES)),
        agent_id=draw(st.none() | _names.filter(lambda t: t.strip() != "")),
        session_id=draw(st.none() | _words),
        source=draw(st.none() | st.text(max_size=80)),
        created_at=created,
        updated_at=draw(_times),
        review_after=draw(st.none() | _times),
        valid_until=draw(st.none() | _times),
        supersedes=draw(st.none() | st.just(repository.new_id(created, "older"))),
        state_reason=draw(st.none() | st.text(max_size=80)),
        revision=draw(st.integers(min_value=1, max_value=10**9)),
    )
    links = tuple(sorted({repository.new_id(created, str(i)) for i in range(draw(st.integers(0, 3)))}))
    return row, links


@settings(max_examples=300, derandomize=DERANDOMIZE, deadline=None)
@given(_rows())
def test_any_row_reads_back_from_its_file_as_it_is(drawn: tuple[MemoryRow, tuple[str, ...]]) -> None:
    row, links = drawn
    shown = fields_of_row(row, links)
    read = parse_memory_file(render_memory(shown), folder_type=row.type)
    assert fields_digest(read) == fields_digest(shown)
    assert (read.revision, read.depends_on, read.id) == (row.revision, links, row.id)
    # And the file of what was read is the same file: rendering is a fixed point.
    assert render_memory(read) == render_memory(shown)


# ---------------------------------------------------------------------- hostile files
HOSTILE_IDS = [
    "../../../etc/passwd",
    "/etc/passwd",
    "a/b",
    "..",
    ".hidden",
    "mem_20260101_zzzz",
    "mem_20260101_" + "a" * 12,
    "x" * 500,
    "nul\x00id",
    "CON",
    "tab\tid",
    "mem_20260610_0123456789ab",
]
_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=60)
    | st.sampled_from(HOSTILE_IDS)
)
_values = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
_keys = st.sampled_from(
    [
        "id",
        "type",
        "state",
        "trust",
        "agent",
        "entities",
        "created",
        "updated",
        "revision",
        "depends_on",
        "supersedes",
        "superseded_by",
        "state_reason",
        "source",
        "title",
    ]
) | st.text(max_size=10)


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


@st.composite
def _hostile_file(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["structured", "forged", "raw", "bytes", "deep", "huge"]))
    body = draw(st.text(max_size=200))
    if kind == "structured":
        front = draw(st.dictionaries(_keys, _values, max_size=8))
        return ("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n# Title\n\n" + body).encode(
            "utf-8", "replace"
        )
    if kind == "forged":  # a well-formed file claiming what it may not
        front = {
            "id": draw(st.sampled_from(HOSTILE_IDS)),
            "type": draw(st.sampled_from([*MEMORY_TYPES, "../x"])),
            "state": draw(st.sampled_from([*STATES, "purged"])),
            "trust": draw(st.sampled_from(TRUST_LEVELS)),
            "agent": draw(st.sampled_from(["alice", "bob", "carol", None])),
            "revision": draw(st.sampled_from([0, 1, 2, 10**9, -1, "3", True])),
            "depends_on": draw(st.lists(st.sampled_from(HOSTILE_IDS), max_size=3)),
        }
        return ("---\n" + yaml.safe_dump(front) + "---\n# Forged\n\n" + (body or "x")).encode("utf-8", "replace")
    if kind == "raw":
        return draw(st.text(max_size=400)).encode("utf-8", "replace")
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "deep":
        return ("---\nentities: " + yaml.safe_dump(_deep(draw(st.integers(10, 200)))) + "---\n# Deep\n\nx\n").encode()
    return b"---\nsource: " + b"y" * draw(st.integers(60_000, 70_000)) + b"\n---\n# Huge\n\nx\n"


def _alices(store: Store) -> dict[str, tuple[Any, ...]]:
    with store.db.read() as session:
        rows = session.exec(select(MemoryRow).where(MemoryRow.agent_id == "alice")).all()
    return {m.id: (m.agent_id, m.trust, m.state, m.title, m.body, m.revision) for m in rows}


def _folders(root: Path, database_url: str | None) -> Iterator[tuple[Store, Store, Path]]:
    clock = FrozenClock(START)
    url = database_url or f"sqlite:///{root / 'a' / '.dokoro' / 'db' / 'dokoro.sqlite'}"
    # The files are under test, not the embeddings: no model, no vector engine to load under tracemalloc.
    fast = RetrievalConfig(embedder="hashing", vector_engine="exact")
    with Store.open(root / "a", database_url=database_url, clock=clock, agent_id="alice", retrieval=fast) as alice:
        for title, body in (
            ("Deploys", "We deploy with the blue-green script."),
            ("Ports", "The api listens on 8080."),
        ):
            alice.memories.remember(type="rule", title=title, body=body, agent_id="alice")
        proposal = alice.memories.remember(type="fact", title="Linter", body="ruff checks it.", agent_id="alice")
        with alice.db.write() as session:
            row = session.get(MemoryRow, proposal.memory.id)
            assert row is not None
            repository.set_state(session, row, "proposed", reason="waits", now=clock.now())
        with Store.open(root / "b", database_url=url, clock=clock, agent_id="bob", retrieval=fast) as bob:
            bob.memories.sync_files()
            bob.memories.recall("warm up")  # what loads once per process is loaded before the cases
            alice.memories.recall("warm up")
            yield alice, bob, root / "b"


def _one_case(alice: Store, bob: Store, folder: Path, files: list[tuple[str, bytes]], before: dict[str, Any]) -> None:
    written: list[Path] = []
    for where, data in files:
        path = folder / "memories" / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    # A file of alice's, forged in bob's folder, too.
    alices = sorted((folder / "memories" / "rule").glob("*.md"))
    original = alices[0].read_bytes()
    alices[0].write_bytes(
        original.replace(b"agent: alice", b"agent: bob").replace(b"state: active", b"state: deprecated")
    )
    tracemalloc.start()
    started = time.monotonic()
    try:
        bob.memories.sync_files()
        bob.memories.reindex_from_files()
        bob.memories.recall("deploy")
        alice.memories.remember(type="fact", title="Still working", body="Alice's tools go on.", agent_id="alice")
        alice.memories.recall("still working")
        elapsed = time.monotonic() - started
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        for path in written:
            path.unlink(missing_ok=True)
        alices[0].write_bytes(original)
    assert elapsed < CASE_SECONDS, f"a case took {elapsed:.1f}s"
    assert peak < CASE_BYTES, f"a case took {peak / 1e6:.0f} MB"
    with alice.db.read() as session:
        rows = session.exec(select(MemoryRow)).all()
    assert all(repository.is_safe_id(m.id) for m in rows)
    after = _alices(alice)
    assert {i: after[i] for i in before} == before  # alice's memories as they were: owner, trust, state, text
    assert all(m.agent_id in (None, "alice", "bob") for m in rows)
    assert not [m for m in rows if m.agent_id == "alice" and m.id not in before and m.title != "Still working"]
    # Nor a person's: bob's folder never makes a user-stated memory no agent wrote.
    assert not [m for m in rows if m.agent_id is None and m.trust == "user-stated" and m.id not in before]


_case = st.lists(
    st.tuples(
        st.sampled_from(
            ["fact/", "rule/", "decision/", "notes/", "ledger/", "fact/mem_20260610_0123456789ab-"]
        ).flatmap(lambda folder: st.text(alphabet="abcxyz-_", min_size=1, max_size=8).map(lambda n: f"{folder}{n}.md")),
        _hostile_file(),
    ),
    min_size=1,
    max_size=3,
)


def _fuzz(tmp: Path, database_url: str | None, examples: int) -> None:
    folders = _folders(tmp, database_url)
    alice, bob, folder = next(folders)
    before = _alices(alice)
    try:

        @settings(
            max_examples=examples,
            derandomize=DERANDOMIZE,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(_case)
        def case(files: list[tuple[str, bytes]]) -> None:
            _one_case(alice, bob, folder, files, before)

        case()
    finally:
        folders.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_hostile_files_in_another_agents_folder_are_at_most_one_file_skipped(tmp_path: Path) -> None:
    _fuzz(tmp_path / "fuzz", None, EXAMPLES)


@pytest.mark.slow
def test_more_hostile_files(tmp_path: Path) -> None:
    _fuzz(tmp_path / "fuzz", None, SLOW_EXAMPLES)


@pytest.mark.slow
def test_hostile_files_on_postgresql_too(tmp_path: Path, postgres_url: str) -> None:
    _fuzz(tmp_path / "fuzz", postgres_url, POSTGRES_EXAMPLES)
