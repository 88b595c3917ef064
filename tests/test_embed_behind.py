"""Writes answer before their vectors (write-behind): a session summary or an indexed text is
committed with its row and full text, found by full text at once, embedded by a background step of
the writing process a moment later; a writer killed before that step leaves rows without vectors,
which the next process embeds; on SQLite and PostgreSQL, with real processes for the crash.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from dokoro_store import Store
from dokoro_store.models.index import chunks, doc_vectors, summary_vectors
from dokoro_store.retrieval import RetrievalConfig
from sqlalchemy import func, select

BEHIND = RetrievalConfig(embedder="hashing", embed_behind=True)
HASHING = "hashing:v1-512"
WAIT_S = 60.0  # a bound on a background step of a loaded machine, not an expected time


def _eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _unembedded_summaries(store: Store) -> int:
    with store.db.read() as session:
        statement = select(func.count()).select_from(summary_vectors).where(summary_vectors.c.embedding.is_(None))
        return int(session.execute(statement).scalar_one())


def _doc_embedder(store: Store, doc_id: str) -> str | None:
    with store.db.read() as session:
        return session.execute(select(doc_vectors.c.embedder).where(doc_vectors.c.doc_id == doc_id)).scalar()


def _chunk_vectors(store: Store, doc_id: str) -> int:
    with store.db.read() as session:
        statement = select(func.count()).where(chunks.c.doc_id == doc_id, chunks.c.embedding.is_not(None))
        return int(session.execute(statement).scalar_one())


def test_a_summary_answers_before_its_vector_and_is_recalled_at_once(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "dokoro", database_url=database_url, retrieval=BEHIND) as store:
        store.episodic.add_summary("s-1", "m", "Fixed the race in session refresh; TODO regression test")

        recalled = store.episodic.recall(query="refresh race")  # full text finds it whatever the step did

        assert [hit.session_id for hit in recalled] == ["s-1"]
        assert _eventually(lambda: _unembedded_summaries(store) == 0)  # the step embedded it behind the write


def test_an_indexed_text_answers_before_its_vectors_and_search_finds_it_at_once(
    tmp_path: Path, database_url: str | None
) -> None:
    with Store.open(tmp_path / "dokoro", database_url=database_url, retrieval=BEHIND) as store:
        report = store.docs.index_content("notes", "The login race lives in auth/session.ts", "Notes")

        assert report.vectors == 0 and report.vectors_behind == 1 and report.chunks >= 1
        keyword = store.search.universal("login race", mode="keyword")
        assert [hit.doc_id for hit in keyword.hits] == ["notes"]
        assert _eventually(lambda: _doc_embedder(store, "notes") == HASHING and _chunk_vectors(store, "notes") > 0)
        semantic = store.search.universal("login race", mode="semantic")
        assert "notes" in [hit.doc_id for hit in semantic.hits]


def test_a_search_right_after_the_write_embeds_what_is_still_waiting(tmp_path: Path, monkeypatch) -> None:
    import dokoro_store.background.write_behind as write_behind

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)  # the step never runs in this test
    with Store.open(tmp_path / "dokoro", retrieval=BEHIND) as store:
        store.docs.index_content("notes", "The login race lives in auth/session.ts", "Notes")
        assert _doc_embedder(store, "notes") is None

        store.search.refresh()  # what search_universal does first

        assert _doc_embedder(store, "notes") == HASHING
        assert "notes" in [hit.doc_id for hit in store.search.universal("login race", mode="semantic").hits]


def test_a_text_written_again_before_its_step_keeps_the_newer_content(tmp_path: Path, monkeypatch) -> None:
    import dokoro_store.background.write_behind as write_behind

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)
    with Store.open(tmp_path / "dokoro", retrieval=BEHIND) as store:
        store.docs.index_content("notes", "first text about redis", "Notes")
        store.docs.index_content("notes", "second text about postgres", "Notes")

        assert store.docs.embed_written() == 1

        assert store.docs.is_indexed("notes") and _doc_embedder(store, "notes") == HASHING
        assert [hit.doc_id for hit in store.search.universal("postgres", mode="keyword").hits] == ["notes"]
        assert store.search.universal("redis", mode="keyword").hits == []


def test_closing_finishes_what_waits_and_a_server_exit_leaves_it_marked(tmp_path: Path, monkeypatch) -> None:
    import dokoro_store.background.write_behind as write_behind

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)
    root = tmp_path / "dokoro"
    store = Store.open(root, retrieval=BEHIND)
    store.episodic.add_summary("s-1", "m", "left for later")
    store.docs.index_content("later", "left for later", "Later")
    store.close(finish=False)  # a server whose client has gone
    with Store.open(root, retrieval=RetrievalConfig(embedder="hashing")) as store:  # no write-behind here
        assert _unembedded_summaries(store) == 1 and _doc_embedder(store, "later") is None
        store.episodic.add_summary("s-2", "m", "written by a process that embeds inline")
        assert _unembedded_summaries(store) == 1
    with Store.open(root, retrieval=BEHIND) as store:
        pass  # closing (finish) embeds what the open found waiting
    with Store.open(root, retrieval=RetrievalConfig(embedder="hashing")) as store:
        assert _unembedded_summaries(store) == 0 and _doc_embedder(store, "later") == HASHING


_WRITER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import dokoro_store.background.write_behind as write_behind
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    write_behind.EMBED_DELAY = 3600.0  # killed before any step runs
    root, url = Path(sys.argv[1]), sys.argv[2] or None
    store = Store.open(root, database_url=url, retrieval=RetrievalConfig(embedder="hashing", embed_behind=True))
    for i in range(3):
        store.episodic.add_summary(f"s-{i}", "m", f"summary {i} about the login race")
        store.docs.index_content(f"doc-{i}", f"document {i} about the login race", f"Doc {i}")
    print("written", flush=True)
    os._exit(9)  # as SIGKILL would: no close, no step
    """
)


def test_a_writer_killed_before_embedding_leaves_rows_the_next_process_embeds(
    tmp_path: Path, database_url: str | None
) -> None:
    root = tmp_path / "dokoro"
    done = subprocess.run(
        [sys.executable, "-c", _WRITER, str(root), database_url or ""], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 9 and done.stdout.strip() == "written", done.stderr

    with Store.open(root, database_url=database_url, retrieval=BEHIND) as store:  # the next server process
        assert [hit.session_id for hit in store.episodic.recall(query="login race", limit=5)]  # full text, at once
        assert _eventually(lambda: _unembedded_summaries(store) == 0)
        assert _eventually(lambda: all(_doc_embedder(store, f"doc-{i}") == HASHING for i in range(3)))


@pytest.mark.parametrize("embedder", ["none"])
def test_without_an_embedder_nothing_waits(tmp_path: Path, embedder: str) -> None:
    with Store.open(tmp_path / "dokoro", retrieval=RetrievalConfig(embedder=embedder, embed_behind=True)) as store:
        report = store.docs.index_content("notes", "plain text", "Notes")
        store.episodic.add_summary("s", "m", "plain")

        assert report.vectors_behind == 0 and store.docs.embed_written() == 0


def test_a_search_after_a_stream_of_writes_embeds_the_last_few_and_leaves_the_rest_to_the_step(
    tmp_path: Path, database_url: str | None, monkeypatch
) -> None:
    """A reader never pays for a whole backlog: the newest batch is embedded by the search, the
    older writes are found by full text at once and embedded by the step."""
    import dokoro_store.background.write_behind as write_behind

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)  # the step is driven by hand below
    count = write_behind.BATCH + 5
    with Store.open(tmp_path / "dokoro", database_url=database_url, retrieval=BEHIND) as store:
        for n in range(count):
            store.docs.index_content(f"note-{n:02d}", f"note {n} about the login race", f"Note {n}")
            store.episodic.add_summary(f"s-{n:02d}", "m", f"session {n} fixed the login race")

        store.search.refresh()  # what search_universal does first
        embedded = [n for n in range(count) if _doc_embedder(store, f"note-{n:02d}") == HASHING]
        assert embedded == list(range(5, count))  # the newest batch
        assert "note-00" in [hit.doc_id for hit in store.search.universal("note 0", mode="keyword").hits]

        store.episodic.recall(query="which database keeps tokens?")  # no summary shares its words
        assert _unembedded_summaries(store) == 5  # the newest batch embedded by the recall

        assert store.docs.embed_written() == 5 and store.episodic.embed_written() == 5  # the step's share
        assert _unembedded_summaries(store) == 0 and _doc_embedder(store, "note-00") == HASHING


def test_a_recall_embeds_at_most_one_batch_of_what_another_process_left(
    tmp_path: Path, database_url: str | None, monkeypatch
) -> None:
    """Summaries another process left without vectors (a killed writer's) are the step's sweep: a
    recall meanwhile embeds one batch of them, never the whole backlog."""
    import dokoro_store.background.write_behind as write_behind
    from sqlalchemy import text

    monkeypatch.setattr(write_behind, "EMBED_DELAY", 3600.0)  # the sweep is held back
    count = write_behind.BATCH * 2 + 3
    root = tmp_path / "dokoro"
    with Store.open(root, database_url=database_url, retrieval=BEHIND) as store:
        for n in range(count):
            store.episodic.add_summary(f"s-{n:02d}", "m", f"session {n} fixed the login race")
        store.episodic.embed_written()
        with store.db.engine.begin() as connection:  # as a killed writer leaves them
            connection.execute(text("UPDATE conversation_summaries SET embedding = NULL, embedder = NULL"))
    with Store.open(root, database_url=database_url, retrieval=BEHIND) as store:  # the next process
        store.episodic.recall(query="which database keeps tokens?")
        assert _unembedded_summaries(store) == count - write_behind.BATCH
        assert store.episodic.embed_written() == count - write_behind.BATCH  # the sweep's share
        assert _unembedded_summaries(store) == 0
