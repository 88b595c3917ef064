"""A full reindex runs once at a time in a process: a second caller is refused at once, not queued
behind it with a second copy of the work (a client repeating the call on the shared server)."""

from __future__ import annotations

import threading

import pytest
from dokoro_store import ConflictError, Store


def test_a_second_full_reindex_is_refused_while_one_runs(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.search.index_content("doc-1", "the cache TTL is five minutes", "Cache")
    inside, release = threading.Event(), threading.Event()
    real = store.docs.index_docs

    def slow(*args: object, **kwargs: object) -> object:
        inside.set()
        assert release.wait(60)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.docs, "index_docs", slow)
    outcome: list[object] = []
    first = threading.Thread(target=lambda: outcome.append(store.docs.reindex(full=True)))
    first.start()
    try:
        assert inside.wait(60)
        with pytest.raises(ConflictError, match="a full reindex is already running"):
            store.docs.reindex(full=True)
    finally:
        release.set()
        first.join(60)
    assert outcome and getattr(outcome[0], "indexed", 0) == 1
    monkeypatch.setattr(store.docs, "index_docs", real)
    assert store.docs.reindex(full=True).indexed == 1  # the next one, once the first is done
