"""A hit below relevance zero is never listed: a document whose only tie to the query is a
meaning opposite to it (a cosine at or below zero, no word in common) is left out of search and
recall, on both databases."""

from __future__ import annotations

from dokoro_store import Store

TEXTS = {
    "smoothie": "Banana smoothie: blend a banana, yoghurt and honey.",
    "fridays": "We deploy on Fridays never. No deploys on Friday afternoons.",
    "jwt": "The API uses JWT. Tokens are JWT signed with RS256.",
}


def test_no_search_hit_has_only_a_negative_cosine(any_store: Store):
    for doc_id, text in TEXTS.items():
        any_store.docs.save(doc_id, text, title=text.split(".")[0])
    any_store.docs.index_docs(list(TEXTS))

    for mode in ("hybrid", "semantic"):
        hits = any_store.search.universal("banana smoothie recipe", limit=10, mode=mode).hits
        assert hits and hits[0].doc_id == "smoothie"
        for hit in hits:
            assert hit.fts_score is not None or (hit.vector_score or 0) > 0, (mode, hit.doc_id, hit.vector_score)


def test_recall_lists_no_memory_of_the_opposite_meaning(any_store: Store):
    any_store.memories.remember(type="decision", title="We deploy on Fridays never", body=TEXTS["fridays"])
    any_store.memories.remember(type="fact", title="Banana smoothies", body=TEXTS["smoothie"])

    answer = any_store.memories.recall_answer("banana smoothie recipe")

    assert [h.memory.title for h in answer.hits][:1] == ["Banana smoothies"]
    for hit in answer.hits:
        assert "cosine -" not in hit.reason and "cosine 0.000" not in hit.reason, hit
