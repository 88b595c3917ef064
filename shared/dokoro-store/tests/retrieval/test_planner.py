"""The query planner: OR of terms, phrases kept, CJK terms, and no user text that can raise."""

from __future__ import annotations

import pytest
from dokoro_store.index.fulltext.planner import plan_query

HOSTILE = [
    '"unbalanced quote',
    '"',
    '""',
    "a AND b",
    "NOT this OR that",
    "NEAR(refresh token, 3)",
    "*",
    "refresh*",
    "-token",
    "--",
    "title:secret",
    "^start",
    "(((",
    "a + b - c",
    "'; DROP TABLE docs; --",
    "100% _done_",
    "\\",
    "",
    "   ",
    "東京に行きました",
    "회의를 했어요",
    "我们明天去北京开会",
    "emoji 🚀 rocket",
]


def test_a_question_becomes_an_or_of_its_content_words():
    planned = plan_query("What did Caroline do at the LGBTQ support group?")

    assert planned.terms == ("caroline", "lgbtq", "support", "group")
    assert planned.fts5() == '"caroline" OR "lgbtq" OR "support" OR "group"'
    assert planned.websearch() == "caroline or lgbtq or support or group"


def test_a_quoted_phrase_stays_a_phrase():
    planned = plan_query('"refresh token" rotation')

    assert planned.phrases == ("refresh token",)
    assert planned.fts5() == '"rotation" OR "refresh token"'


def test_operators_in_user_text_are_plain_words():
    planned = plan_query("login AND NOT logout NEAR(x)")

    assert planned.fts5() == '"login" OR "logout"'


def test_a_question_of_stop_words_only_still_searches_them():
    planned = plan_query("what is it")

    assert planned.stopwords_only
    assert planned.terms == ("what", "is", "it")


@pytest.mark.parametrize("text", HOSTILE)
def test_no_user_text_breaks_the_planner(text):
    planned = plan_query(text)

    query = planned.fts5()
    assert query is None or query.count('"') % 2 == 0


def test_korean_words_also_yield_their_stems_without_particles():
    planned = plan_query("회의를 했어요")

    assert "회의를" in planned.cjk and "회의" in planned.cjk


def test_japanese_keeps_kanji_and_katakana_and_drops_particles():
    planned = plan_query("東京のデータベースに行きました")

    assert "東京" in planned.cjk and "データベース" in planned.cjk
    assert "の" not in planned.cjk and "に" not in planned.cjk


def test_a_long_chinese_run_becomes_overlapping_pairs():
    planned = plan_query("我们明天去北京开会")

    assert "北京" in planned.cjk and "开会" in planned.cjk


def test_a_long_term_is_cut_so_its_substring_query_stays_cheap():
    planned = plan_query("a" * 1_000_000 + ' "' + "word " * 200 + '"')

    assert planned.terms == ("a" * 64,)
    assert len(planned.phrases[0]) == 256
    assert all(len(term) <= 256 for term in planned.substrings(include_words=True))
