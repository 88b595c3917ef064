"""LanceDB written behind the database, with real processes: several write the same store at once,
one is killed (SIGKILL) with vectors not yet copied, and every vector written is then found."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from dokoro_store import Store
from dokoro_store.models.index import chunks
from dokoro_store.retrieval import RetrievalConfig
from sqlalchemy import func, select

pytestmark = pytest.mark.slow  # several writer processes, one killed

_WORDS = [f"w{i}" for i in range(1000)]

# A writer: indexes its documents one at a time (as an agent's calls do), printing each id once
# committed. ``delay`` is the wait before the background copy; the doomed writer never gets there.
_CHILD = textwrap.dedent(
    """
    import random, sys
    from pathlib import Path
    import dokoro_store.index.vectors.lance.engine as lance
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    root, name, count, delay = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    lance.MIRROR_DELAY = delay
    words = [f"w{i}" for i in range(1000)]
    with Store.open(root, retrieval=RetrievalConfig(embedder="hashing")) as store:
        for i in range(count):
            rng = random.Random(f"{name}-{i}")
            store.docs.index_content(f"{name}-{i}", " ".join(rng.sample(words, 14)), f"{name} {i}")
            print(f"{name}-{i}", flush=True)
    """
)


def _content(doc_id: str) -> str:
    return " ".join(random.Random(doc_id).sample(_WORDS, 14))


def _writer(root: Path, name: str, count: int, delay: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(root), name, str(count), str(delay)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_vectors_written_by_several_processes_one_killed_are_all_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed_after: Any
) -> None:
    import dokoro_store.index.vectors.lance.engine as lance

    # The searches below go to LanceDB and the tail, not to the in-memory scan a store this small gets.
    monkeypatch.setattr(lance, "EXACT_IN_MEMORY", 0)
    root = tmp_path / "dokoro"
    config = RetrievalConfig(embedder="hashing")
    with Store.open(root, retrieval=config) as store:  # the schema, before the writers race
        store.docs.index_content("seed", _content("seed"), "Seed")

    # Two writers and a third killed mid-way, all at once; then one more killed on its own.
    writers = {name: _writer(root, name, 40, 0.2) for name in ("a", "b")}
    written = killed_after(_writer(root, "killed", 1000, 3600.0), 15)
    for name, process in writers.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        written += out.split()
        assert f"{name}-39" in out
    alone = killed_after(_writer(root, "alone", 1000, 3600.0), 10)
    written += alone

    with Store.open(root, retrieval=config) as store:
        with store.db.read() as session:
            waiting = session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None))
            ).scalar()
        assert waiting and waiting >= 10  # the last killed writer's vectors were never copied
        embedder = store.embedder.get()
        index = store.docs.vector_index()
        for doc_id in ["seed", *written]:
            vector = embedder.embed([_content(doc_id)], query=True)[0]
            assert index.search(vector, embedder.id, 1)[0].doc_id == doc_id
        index.mirror()  # the next process copies them (its searches scheduled it already)
        with store.db.read() as session:
            assert not session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None))
            ).scalar()
        for doc_id in written[::5]:
            vector = embedder.embed([_content(doc_id)], query=True)[0]
            assert index.search(vector, embedder.id, 1)[0].doc_id == doc_id
        with store.db.read() as session:
            stored = session.execute(
                select(func.count()).select_from(chunks).where(chunks.c.embedding.is_not(None))
            ).scalar()
        assert index.count() == stored
        assert index._table.open().count_rows() == stored  # every vector copied, none twice
