"""Texts written one call at a time into a thread (``search_index_content``'s thread and at)."""

from __future__ import annotations

import pytest
from dokoro_store.errors import InvalidArgumentError

from .test_hybrid import OTHERS, THREAD


def _places(store, thread: str) -> list[str]:
    from dokoro_store.errors import NotFoundError

    docs = []
    for i in range(len(THREAD)):
        try:
            docs.append(store.docs.get(f"turn-{i}"))
        except NotFoundError:
            continue
    placed = sorted((d.thread_pos, d.id) for d in docs if d.thread == thread)
    return [doc_id for _pos, doc_id in placed]


def test_texts_indexed_into_a_thread_are_neighbours_in_the_order_written(open_store):
    store = open_store(embedder="hashing", vector_engine="exact")

    results = [store.search.index_content(f"turn-{i}", text, "Chat", thread="chat-1") for i, text in enumerate(THREAD)]

    assert [(r.thread, r.thread_pos) for r in results] == [("chat-1", i) for i in range(len(THREAD))]
    assert _places(store, "chat-1") == [f"turn-{i}" for i in range(len(THREAD))]


def test_a_text_written_earlier_takes_its_place_and_the_later_ones_move_on(open_store):
    store = open_store(embedder="hashing", vector_engine="exact")
    for i, day in ((0, "01"), (2, "03"), (3, "04")):
        store.search.index_content(f"turn-{i}", THREAD[i], thread="chat-1", at=f"2024-05-{day}T10:00:00Z")

    late = store.search.index_content("turn-1", THREAD[1], thread="chat-1", at="2024-05-02T10:00:00Z")

    assert late.thread_pos == 1
    assert _places(store, "chat-1") == ["turn-0", "turn-1", "turn-2", "turn-3"]
    assert [store.docs.get(f"turn-{i}").thread_pos for i in range(4)] == [0, 1, 2, 3]


def test_reindexing_a_text_keeps_its_place_and_moving_it_leaves_no_gap(open_store):
    store = open_store(embedder="hashing", vector_engine="exact")
    for i in range(4):
        store.search.index_content(f"turn-{i}", THREAD[i], thread="chat-1")

    again = store.search.index_content("turn-1", THREAD[1] + " (edited)", thread="chat-1")
    assert again.thread_pos == 1
    moved = store.search.index_content("turn-1", THREAD[1], thread="chat-2")

    assert (moved.thread, moved.thread_pos) == ("chat-2", 0)
    assert [store.docs.get(f"turn-{i}").thread_pos for i in (0, 2, 3)] == [0, 1, 2]


def test_a_search_lifts_the_reply_beside_a_text_indexed_in_a_thread(open_store):
    store = open_store()
    for i, text in enumerate(THREAD):
        store.search.index_content(f"turn-{i}", text, "Chat, 3 May 2024", thread="chat-1", at="2024-05-03T10:00:00Z")
    for i, text in enumerate(OTHERS):
        store.search.index_content(f"other-{i}", text, "Note")

    hits = store.search.universal("pottery workshop", limit=4).hits

    ids = [h.doc_id for h in hits]
    # "Lisbon, the first week of June!" shares no word with the query: the reply to the question that
    # names it comes first, the question right behind it.
    assert ids[:2] == ["turn-2", "turn-1"]
    assert "beside turn-1" in next(h for h in hits if h.doc_id == "turn-2").why


def test_at_without_a_thread_or_not_a_date_is_refused_and_nothing_is_written(open_store):
    store = open_store(embedder="hashing", vector_engine="exact")

    with pytest.raises(InvalidArgumentError, match="pass thread too"):
        store.search.index_content("turn-0", THREAD[0], at="2024-05-01")
    with pytest.raises(InvalidArgumentError, match=r"at: .*ISO-8601"):
        store.search.index_content("turn-0", THREAD[0], thread="chat-1", at="last tuesday")

    from dokoro_store.errors import NotFoundError

    with pytest.raises(NotFoundError):
        store.docs.get("turn-0")
