"""A question about one speaker of the chat lines it finds: the vector leg reads what it asks as well."""

from __future__ import annotations

import numpy as np
import pytest
from dokoro_store.index.ranking.speakers import blend, without_speaker
from dokoro_store.semantic.documents.service import NewDocument

TURNS = [
    "Ana: I signed up for a pottery class yesterday, it is like therapy for me.",
    "Ben: That sounds great, Ana! I mostly go running to clear my head.",
    "Ana: Thanks, Ben! We went camping with the kids last weekend.",
    "Ben: Nice. My dog loves the beach more than the forest.",
]


def _texts(*lines: str) -> list[str]:
    return [f"8 May 2023\n{line}" for line in lines]


def test_the_one_speaker_a_query_names_is_taken_out_with_a_possessive() -> None:
    texts = _texts(*TURNS)

    assert without_speaker("What activities does Ana partake in?", texts) == "What activities does partake in?"
    assert without_speaker("What do Ana's kids like?", texts) == "What do kids like?"
    assert without_speaker("what does ana do to relax", texts) == "what does do to relax"  # any case


def test_no_speaker_several_speakers_or_nothing_left_leave_the_query_alone() -> None:
    texts = _texts(*TURNS)

    assert without_speaker("Which class is like therapy?", texts) is None  # names no speaker
    assert without_speaker("What do Ana and Ben both enjoy?", texts) is None  # names two
    assert without_speaker("Ana?", texts) is None  # nothing but the name would be left
    # A name the query holds that is no speaker of the texts (only mentioned in them) is kept.
    assert without_speaker("What does Ben think of Lisbon?", _texts("Ana: Ben loves Lisbon.")) is None
    # Labels that open a note as a name would (TODO:, Note:) are no speakers.
    assert without_speaker("What is on the TODO list?", _texts("TODO: fix the build")) is None
    assert without_speaker("Ana likes pottery", []) is None


def test_a_speaker_of_several_words_and_a_memory_s_repeated_title() -> None:
    memory = "8 May 2023 (D1:3)\n8 May 2023 (D1:3)\n\nAna Maria: I flew to Lisbon!\n\nEntities: Ana Maria"

    assert without_speaker("Where did Ana Maria fly?", [memory]) == "Where did fly?"


@pytest.mark.parametrize("query", ['"; DROP TABLE docs; -- NEAR(*', "\x00 ::: ", "陶芸 ワークショップ", "a" * 3000, ""])
def test_hostile_queries_never_raise(query: str) -> None:
    assert without_speaker(query, _texts(*TURNS, "陈伟: 我们明天见")) is None


def test_blend_is_the_normalised_sum() -> None:
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([0.0, 1.0], dtype=np.float32)

    mixed = blend(a, b)

    assert mixed.dtype == np.float32
    assert np.allclose(mixed, [2**-0.5, 2**-0.5])
    assert np.allclose(blend(a, -a), a)  # opposite vectors: the query's own


def test_the_vector_leg_blends_in_the_query_less_the_speaker_it_names(open_store) -> None:
    store = open_store(embedder="hashing", vector_engine="exact")
    docs = [
        NewDocument(f"turn-{i}", text, title="8 May 2023", thread="chat", thread_pos=i) for i, text in enumerate(TURNS)
    ]
    store.docs.save_many(docs)
    store.docs.index_docs([d.id for d in docs])
    embedder = store.embedder.get()
    assert embedder is not None

    def plain(query: str) -> np.ndarray:
        return embedder.embed([query], query=True)[0]

    about_ana = "What activities does Ana partake in?"
    legs = store.search.legs(about_ana)
    assert np.allclose(legs.query_vector, blend(plain(about_ana), plain("What activities does partake in?")))

    about_both = "What do Ana and Ben both enjoy?"
    assert np.allclose(store.search.legs(about_both).query_vector, plain(about_both))
    # A single leg (vectors alone) embeds the query as it is: no full-text hits to read speakers from.
    assert np.allclose(store.search.legs(about_ana, "semantic").query_vector, plain(about_ana))
    # The hits' cosines are the blended query's: the search answers and explains as before.
    hits = store.search.universal(about_ana, limit=4).hits
    assert hits and all(h.relevance >= 0 for h in hits)
