"""Hybrid search on both backends: why each hit surfaced, fusion, CJK and substrings, hostile queries."""

from __future__ import annotations

import pytest
from dokoro_store.errors import EmbedderUnavailableError, InvalidArgumentError
from dokoro_store.index.ranking.fusion import DEFAULT_FUSION

from .test_planner import HOSTILE

CORPUS = {
    "auth": ("Auth decision", "We chose JWT access tokens with refresh token rotation for the public API."),
    "login-bug": ("Login bug", "Users could not sign in after their session expired; fixed the cookie refresh."),
    "db": ("Database", "PostgreSQL is the shared team database; SQLite stays the embedded default."),
    "garden": ("Garden", "Tomatoes and basil grow well on the balcony in summer."),
    "ko": ("회의록", "오늘 팀 회의를 했어요. 로그인 버그를 고쳤습니다."),
    "ja": ("議事録", "東京のデータベースを移行しました。"),
    "code": ("Locks", "The LockManager class serialises writers across processes."),
}


@pytest.fixture
def corpus_store(search_store):
    for doc_id, (title, content) in CORPUS.items():
        search_store.docs.index_content(doc_id, content, title)
    return search_store


def test_hybrid_hits_say_why_they_surfaced_and_carry_their_scores(corpus_store):
    result = corpus_store.search.universal("refresh token rotation", limit=3)

    top = result.hits[0]
    assert top.doc_id == "auth"
    assert top.source == "hybrid"
    assert set(top.matched_terms) >= {"refresh", "token", "rotation"}
    assert "matched terms" in top.why and "semantic neighbour" in top.why
    assert top.fts_rank == 0 and top.fts_score == pytest.approx(1.0)
    assert top.vector_score is not None and top.vector_rank is not None
    assert top.score == max(h.score for h in result.hits) and top.score >= DEFAULT_FUSION.text_weight
    assert [h.rank for h in result.hits] == [1, 2, 3]
    assert result.embedder == corpus_store.embedder.status().id


def test_a_paraphrase_with_no_shared_word_is_found_as_a_semantic_neighbour(corpus_store):
    result = corpus_store.search.universal("people unable to log on once their session timed out", limit=3)

    semantic = {h.doc_id: h for h in result.hits if h.vector_score is not None}
    assert "login-bug" in semantic
    assert "semantic neighbour" in semantic["login-bug"].why


def test_keyword_mode_uses_full_text_only(corpus_store):
    result = corpus_store.search.universal("database", mode="keyword")

    assert [h.doc_id for h in result.hits] == ["db"]
    assert result.hits[0].source == "keyword" and result.hits[0].vector_score is None
    assert result.hits[0].why == "matched terms: database"


def test_semantic_mode_uses_vectors_only(corpus_store):
    result = corpus_store.search.universal("vegetables on a balcony", mode="semantic", limit=2)

    assert result.hits[0].doc_id == "garden"
    assert all(h.source == "semantic" and h.fts_score is None for h in result.hits)


def test_stemming_finds_inflected_english_words(corpus_store):
    assert corpus_store.search.universal("serialising writer", mode="keyword").hits[0].doc_id == "code"


def test_a_korean_query_matches_inflected_forms(corpus_store):
    # 회의는 (topic particle) never appears; the text has 회의를 (object particle).
    hits = corpus_store.search.universal("회의는", mode="keyword").hits

    assert [h.doc_id for h in hits] == ["ko"]
    assert "회의" in hits[0].matched_terms


def test_a_japanese_query_finds_its_words_inside_running_text(corpus_store):
    hits = corpus_store.search.universal("データベースの移行", mode="keyword").hits

    assert hits[0].doc_id == "ja"


def test_a_substring_of_an_identifier_is_found(corpus_store):
    hits = corpus_store.search.universal("lockmanag", mode="keyword").hits

    assert [h.doc_id for h in hits] == ["code"]


@pytest.mark.parametrize("query", [q for q in HOSTILE if q.strip()])
def test_hostile_queries_never_raise(corpus_store, query):
    for mode in ("keyword", "hybrid"):
        corpus_store.search.universal(query, mode=mode)


def test_a_quoted_phrase_finds_the_document_and_operators_are_plain_words(corpus_store):
    hits = corpus_store.search.universal('"refresh token" AND NEAR(*', mode="keyword").hits

    assert hits[0].doc_id == "auth"


def test_like_wildcards_in_a_short_cjk_term_are_literal(search_store):
    search_store.docs.index_content("pct", "進捗は100%です", "進捗")
    search_store.docs.index_content("other", "進捗は順調です", "別")

    hits = search_store.search.universal("100%", mode="keyword").hits

    assert [h.doc_id for h in hits] == ["pct"]


def test_excerpts_strip_front_matter_and_point_at_the_matching_text(search_store):
    content = "---\ntitle: Notes\n---\n# Notes\n\n" + "filler line\n" * 30 + "the quarterly budget review\n"
    search_store.docs.index_content("notes", content, "Notes")

    hit = search_store.search.universal("budget", mode="keyword").hits[0]

    assert "title:" not in hit.excerpt
    assert "budget" in hit.excerpt


def test_bad_arguments_are_refused(search_store):
    with pytest.raises(InvalidArgumentError, match="query must not be empty"):
        search_store.search.universal("  ")
    with pytest.raises(InvalidArgumentError, match="limit must be between 1 and 100"):
        search_store.search.universal("x", limit=0)
    with pytest.raises(InvalidArgumentError, match="mode must be one of"):
        search_store.search.universal("x", mode="fuzzy")  # type: ignore[arg-type]


def test_without_an_embedder_hybrid_degrades_to_full_text_and_says_so(open_store):
    store = open_store(embedder="none")
    store.docs.index_content("db", "PostgreSQL database", "DB")

    result = store.search.universal("database")

    assert [h.doc_id for h in result.hits] == ["db"]
    assert "full-text only" in result.notes[0]
    with pytest.raises(EmbedderUnavailableError, match="semantic search needs an embedder"):
        store.search.universal("database", mode="semantic")


def test_status_names_the_engines_and_counts_what_is_indexed(corpus_store, database_url):
    status = corpus_store.search.status()

    assert status.embedder_kind == "onnx" and status.embedder_model_file.endswith("model.onnx")  # type: ignore[union-attr]
    assert status.reranker
    assert status.total_docs == status.indexed_docs == len(CORPUS)
    assert status.pending_docs == 0
    assert status.vectors == len(CORPUS) == status.engine_vectors
    if database_url is None:
        assert status.vector_engine == "lancedb"
        assert "FTS5" in status.full_text
    else:
        assert status.vector_engine == "pgvector"
        assert "tsvector" in status.full_text and "pg_trgm" in status.full_text


@pytest.mark.parametrize("engine", ["exact", "auto"])
def test_every_vector_engine_returns_the_same_neighbours(open_store, engine):
    store = open_store(embedder="hashing", vector_engine=engine)
    for doc_id, (title, content) in CORPUS.items():
        store.docs.index_content(doc_id, content, title)

    hits = store.search.universal("team database default", mode="semantic", limit=3).hits

    assert hits[0].doc_id == "db"
    exact = open_store(embedder="hashing", vector_engine="exact")
    again = exact.search.universal("team database default", mode="semantic", limit=3).hits

    def scored(found):  # documents sharing no word score 0 and tie in any order
        return [(h.doc_id, round(h.vector_score or 0, 4)) for h in found if (h.vector_score or 0) > 0.01]

    assert scored(hits) == scored(again)


def test_a_deleted_document_never_surfaces_from_the_vector_engine(open_store):
    store = open_store(embedder="hashing")
    store.docs.index_content("a", "alpha beta gamma")
    store.docs.index_content("b", "alpha beta delta")
    store.search.universal("alpha", mode="semantic")

    store.docs.delete("a")

    assert [h.doc_id for h in store.search.universal("alpha beta gamma", mode="semantic").hits] == ["b"]
