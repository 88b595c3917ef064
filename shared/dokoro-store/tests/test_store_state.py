"""State lives on a store, not in modules: two stores of one process share nothing.

Announcements, the background work (steps, pools, write-behind), the Ollama health checks and
the vector indexes' scope shares belong to a :class:`Store`; the few caches that stay in modules
are process-wide by nature (a model's weights, a text's vector or redaction, a built statement)
and say why where they are defined.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dokoro_store
import pytest
from dokoro_store import DocScope, Store
from dokoro_store.background import steps as background_steps
from dokoro_store.background.steps import Background
from dokoro_store.background.write_behind import BATCH, WriteBehind
from dokoro_store.retrieval import RetrievalConfig

BEHIND = RetrievalConfig(embedder="hashing", embed_behind=True)
WAIT_S = 60.0  # a bound on a background step of a loaded machine, not an expected time

# Module-level caches that are process-wide by nature (each module says why); anything else a
# store's work changes at module level is state that belongs to a store.
PROCESS_WIDE = {
    "dokoro_store.db.dialect._EACH",  # statements built per dialect and table: no data
    "dokoro_store.walls.secrets._CLEAN",  # texts known to hold no secret: a function of the text
    "dokoro_store.index.embedders.static._loaded",  # the bundled model, read-only
    "dokoro_store.index.embedders.static._cached",  # a text's vector: a function of the text
    "dokoro_store.index.embedders.onnx._loaded",  # the bundled model, read-only
    "dokoro_store.index.embedders.onnx._executor",  # threads sized to the machine's cores
}


def _eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def _embedder_of(store: Store, doc_id: str) -> str | None:
    from dokoro_store.models.index import doc_vectors
    from sqlalchemy import select

    with store.db.read() as session:
        return session.execute(select(doc_vectors.c.embedder).where(doc_vectors.c.doc_id == doc_id)).scalar()


def _fingerprint(value: Any) -> object:
    """What a module-level value holds, one level deep: enough to see a registry grow or change."""
    if isinstance(value, dict | OrderedDict):
        return ("map", len(value), tuple(sorted(id(v) for v in value.values())))
    if isinstance(value, list | set | deque):
        return ("items", len(value), tuple(sorted(id(v) for v in value)))
    if type(value).__module__.startswith("dokoro_store") and hasattr(value, "__dict__"):
        return ("object", tuple((k, _fingerprint(v)) for k, v in sorted(vars(value).items())))
    return id(value)


def _module_state() -> dict[str, object]:
    state: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("dokoro_store") or module is None:
            continue
        exported = set(getattr(module, "__all__", ()))
        for attribute, value in vars(module).items():
            if attribute.startswith("__") or attribute in exported:  # a name resolved by the lazy front door
                continue
            state[f"{name}.{attribute}"] = _fingerprint(value)
    return state


def _use(store: Store) -> None:
    """Some of everything a server does: writes behind, searches with scopes, recall, the graph."""
    store.episodic.add_summary("s-1", "m", "Fixed the login race in session refresh")
    store.docs.index_content("notes", "The login race lives in auth/session.ts; Redis holds the tokens", "Notes")
    store.memories.remember(type="fact", title="Tokens live in Redis", body="The session tokens are kept in Redis.")
    store.announcements.add("said once")
    store.search.universal("login race", limit=5)
    store.search.universal("tokens", limit=5, scope=DocScope(doc_types=("memory",)))
    store.memories.recall("where are the tokens", limit=5)
    store.episodic.recall(query="login race")
    store.graph.search_signal("Redis", 5)
    store.docs.embed_written()
    store.episodic.embed_written()


def test_two_stores_in_one_process_change_no_module_state(tmp_path: Path, database_url: str | None) -> None:
    for module in pkgutil.walk_packages(dokoro_store.__path__, "dokoro_store."):
        if ".migrations." not in module.name:
            importlib.import_module(module.name)
    before = _module_state()

    first = Store.open(tmp_path / "first", database_url=database_url, retrieval=BEHIND)
    second = Store.open(tmp_path / "second", retrieval=BEHIND)
    try:
        _use(first)
        _use(second)
        assert first.announcements.take() == ["said once"] and second.announcements.take() == ["said once"]
    finally:
        first.close()
        second.close()

    after = _module_state()
    changed = {name for name, value in after.items() if before.get(name, value) != value}
    appeared = set(after) - set(before)
    assert (changed | appeared) - PROCESS_WIDE == set()


def test_each_store_lists_and_stops_its_own_background_work(tmp_path: Path) -> None:
    first = Store.open(tmp_path / "first", retrieval=BEHIND)
    second = Store.open(tmp_path / "second", retrieval=BEHIND)
    try:
        assert first.background is not second.background
        names = {work.name for work in first.background.listing()}
        assert {"dokoro-summary-embed", "dokoro-embed-behind", "dokoro-graph-extract", "dokoro-wal-checkpoint"} <= names
        assert {work.name for work in second.background.listing()} == names

        first.close(finish=False)
        assert {work.state for work in first.background.listing() if work.kind == "step"} == {"closed"}
        assert "closed" not in {work.state for work in second.background.listing()}

        second.docs.index_content("notes", "The login race lives in auth/session.ts", "Notes")
        assert _eventually(lambda: _embedder_of(second, "notes") == "hashing:v1-512")  # its own step embedded it
    finally:
        second.close()


def test_announcements_are_told_by_their_own_store_once(tmp_path: Path) -> None:
    with Store.open(tmp_path / "first") as first, Store.open(tmp_path / "second") as second:
        first.announcements.add("📦 moved in")

        assert second.announcements.take() == []
        assert first.announcements.take() == ["📦 moved in"]
        assert first.announcements.take() == []


def test_each_store_checks_ollama_health_for_itself(tmp_path: Path, fake_ollama: Any) -> None:
    config = RetrievalConfig(embedder="ollama", ollama_url=fake_ollama.url)
    with Store.open(tmp_path / "first", retrieval=config) as first:
        first.embedder.status()
        first.embedder.status()
        assert fake_ollama.count("/api/tags") == 1  # cached within the store
        with Store.open(tmp_path / "second", retrieval=config) as second:
            second.embedder.status()
        assert fake_ollama.count("/api/tags") == 2  # the other store asked for itself


# ----------------------------------------------------------------------------- giving way
def test_a_due_step_waits_while_the_foreground_holds_a_connection_or_a_call_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(background_steps, "LONGEST_WAIT_S", WAIT_S)  # only the foreground's silence lets it run
    with Store.open(tmp_path / "dokoro") as store:
        ran = threading.Event()
        step = store.background.step(ran.set, name="test-step", failure="failed")
        with store.db.read() as session:
            session.connection()  # a connection checked out: a tool call under way
            step.schedule(0.0)
            assert not ran.wait(0.3)  # due, but the foreground is busy
            assert step.due
        assert ran.wait(WAIT_S)  # quiet again: it runs

        ran.clear()
        with store.background.foreground():  # a server's tool call under way, between its statements
            step.schedule(0.0)
            assert not ran.wait(0.3)
        assert ran.wait(WAIT_S)
        step.close()


def test_a_step_thread_is_not_foreground(tmp_path: Path) -> None:
    with Store.open(tmp_path / "dokoro") as store:
        quiet: list[float] = []

        def step() -> None:
            with store.db.read() as session:
                session.connection()
                quiet.append(store.background.quiet_in())

        made = store.background.step(step, name="reader", failure="failed")
        made.schedule(0.0)
        assert _eventually(lambda: bool(quiet))
        made.close()
        assert quiet == [0.0]  # its own connection does not hold the store's background back


def test_write_behind_works_in_batches_and_every_key_once(monkeypatch) -> None:
    import dokoro_store.background.write_behind as write_behind

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)  # driven by hand below
    background = Background()
    batches: list[list[int]] = []
    marked = list(range(100, 140))

    def work(keys: Sequence[int]) -> int:
        batches.append(list(keys))
        return len(keys)

    def marks(after: int | None, limit: int) -> list[int]:
        return [key for key in marked if after is None or key > after][:limit]

    behind: WriteBehind[int] = WriteBehind(background, work, marks, name="test-behind", failure="failed")
    for key in range(40):
        behind.add(key)
    assert behind.waiting == 40

    assert behind.run() == 40
    assert all(len(batch) <= BATCH for batch in batches) and len(batches) == -(-40 // BATCH)
    assert sorted(key for batch in batches for key in batch) == list(range(40))

    batches.clear()
    behind.resume()  # the marks a killed process left, swept a batch at a time
    assert behind.run() == len(marked)
    assert sorted(key for batch in batches for key in batch) == marked
    assert behind.run() == 0
    background.close()


def test_a_batch_that_fails_stays_waiting(monkeypatch) -> None:
    import dokoro_store.background.write_behind as write_behind

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)
    background = Background()
    failing = [True]

    def work(keys: Sequence[str]) -> int:
        if failing[0]:
            raise RuntimeError("the embedder went away")
        return len(keys)

    behind: WriteBehind[str] = WriteBehind(background, work, lambda _after, _limit: [], name="t", failure="failed")
    behind.add("a")
    with pytest.raises(RuntimeError):
        behind.run()
    assert behind.waiting == 1
    failing[0] = False
    assert behind.run() == 1 and behind.waiting == 0
    background.close()
