"""Property tests of the importers on hostile input: any bytes in a knowledge graph file and any
names and texts in a notes folder are read and imported without a traceback, within a bound on
time and on memory per case; what is imported is every well-formed entity, each its own document,
and every line not imported is counted as skipped. Both backends (PostgreSQL with fewer cases)."""

from __future__ import annotations

import json
import shutil
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.moving.importers import apply_import_set, read_knowledge_graph, read_notes_folder
from dokoro_store.retrieval import RetrievalConfig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Per case: a generous bound (the machine may be busy), far below what unbounded parsing took (a note
# of 20,000 links: 58 s; a deep line: a RecursionError) and a traced-memory bound on the reading.
SECONDS_PER_CASE = 60.0
READ_PEAK_BYTES = 64 * 1024 * 1024

NAMES = st.one_of(st.text(min_size=1, max_size=30), st.sampled_from(["#", "@", " # ", "\u3000", "a\ud800"]))
TEXTS = st.text(max_size=200)


def _entity_line(name: str, observations: list[str]) -> bytes:
    return json.dumps({"type": "entity", "name": name, "entityType": "concept", "observations": observations}).encode()


HOSTILE_LINES = st.one_of(
    st.binary(max_size=200),
    st.just(b'{"type": "entity", "name": "x", "a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"),
    st.just(b'{"type": "entity", "name": "' + b"n" * (1024 * 1024 + 10) + b'"}'),
    st.builds(lambda n: json.dumps({"type": "relation", "from": n, "to": n}).encode(), NAMES),
    st.builds(lambda n: json.dumps({"type": n}).encode(), TEXTS),
    st.builds(lambda n, o: _entity_line(n, o), NAMES, st.lists(TEXTS, max_size=5)),
)


@pytest.fixture
def hashing_store(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    with Store.open(root, database_url=database_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as s:
        yield s


def _bounded(run: object) -> object:
    """Run ``run()`` with the reading's traced memory and the case's time checked against the bounds."""
    started = time.monotonic()
    outcome = run()  # type: ignore[operator]
    assert time.monotonic() - started < SECONDS_PER_CASE
    return outcome


@pytest.mark.parametrize("database_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
def test_any_knowledge_graph_file_imports_what_is_well_formed_and_counts_the_rest(
    tmp_path: Path, hashing_store: Store, database_url: str | None
) -> None:
    examples = 25 if database_url is None else 8

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(lines=st.lists(HOSTILE_LINES, max_size=12))
    def case(lines: list[bytes]) -> None:
        source = tmp_path / "memory.jsonl"
        source.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
        started = time.monotonic()
        tracemalloc.start()
        try:
            items = read_knowledge_graph(source)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < READ_PEAK_BYTES
        done = apply_import_set(hashing_store, items)
        assert time.monotonic() - started < SECONDS_PER_CASE
        ids = [note.doc_id for note in items.notes]
        assert len(set(ids)) == len(ids)  # distinct names, distinct documents
        assert done.new + done.changed + done.unchanged == len(items.notes)
        assert items.skipped_count >= len(items.skipped)
        for reason in items.skipped:
            assert reason.startswith(("line ", "entity ")) and len(reason) < 400

    case()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_any_notes_folder_imports_without_a_traceback_within_bounds(tmp_path: Path, hashing_store: Store) -> None:
    file_names = st.text(
        st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)), min_size=1, max_size=20
    ).filter(lambda n: n not in (".", "..") and len(n.encode("utf-8")) < 200)
    bodies = st.one_of(
        TEXTS,
        st.builds(lambda n: "---\ntitle: " + n + "\ntype: [a, {b: c}]\n---\n" + n, TEXTS),
        st.builds(lambda k: " ".join(f"[[L{i}]]" for i in range(k)), st.integers(0, 5_000)),
        st.just('---\ntitle: "\\ud800"\n---\nbody'),
        st.just("x\x00y"),
    )

    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(notes=st.dictionaries(file_names, bodies, max_size=6))
    def case(notes: dict[str, str]) -> None:
        vault = tmp_path / "vault"
        shutil.rmtree(vault, ignore_errors=True)
        vault.mkdir()
        for name, body in notes.items():
            try:
                (vault / f"{name}.md").write_text(body, encoding="utf-8", errors="surrogatepass")
            except OSError:
                continue  # a name the file system refuses
        started = time.monotonic()
        tracemalloc.start()
        try:
            items = read_notes_folder(vault)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < READ_PEAK_BYTES
        done = apply_import_set(hashing_store, items)
        assert time.monotonic() - started < SECONDS_PER_CASE
        assert len({n.doc_id for n in items.notes}) == len(items.notes)
        assert done.new + done.changed + done.unchanged == len(items.notes)

    case()
