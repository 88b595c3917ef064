"""Dates in text and the period a query names: the re-ranker's ``date`` feature."""

from __future__ import annotations

import datetime as dt

import pytest
from dokoro_store.index.dates import Period, closeness, query_period, text_dates
from dokoro_store.index.fulltext.planner import plan_query
from dokoro_store.index.ranking.hybrid import Scored
from dokoro_store.index.ranking.rerank import FEATURES, features, rerank

from .test_planner import HOSTILE


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("What did Ana paint on 8 May, 2023?", Period(2023, 5, 8)),
        ("What did Ana paint on May 8th 2023?", Period(2023, 5, 8)),
        ("What changed on 2023-05-08?", Period(2023, 5, 8)),
        ("What did Ana start in December 2023?", Period(2023, 12)),
        ("When did Ana go camping in June?", Period(None, 6)),
        ("What happened since Sept?", Period(None, 9)),
        ("What did we ship on 3 June?", Period(None, 6, 3)),
        ("How many releases in 2022?", Period(2022)),
        ("2023年5月8日に何をしましたか", Period(2023, 5, 8)),
        ("2023年5月の会議", Period(2023, 5)),
        ("What may Ana paint next?", None),  # the verb is no month
        ("Which port, 8080 or 2023x?", None),
        ("Why did the build fail?", None),
    ],
)
def test_the_period_a_query_names(query: str, period: Period | None) -> None:
    assert query_period(query) == period


def test_a_text_holds_full_dates_and_never_a_bare_month_or_the_verb_may() -> None:
    assert text_dates("1:56 pm on 8 May, 2023\nAna: I may go in June") == [dt.date(2023, 5, 8)]
    assert text_dates("Released 2023-05-08; planned for March 2024.") == [dt.date(2023, 5, 8), dt.date(2024, 3, 1)]
    assert text_dates("31 February, 2023") == [dt.date(2023, 2, 1)]  # no such day: its month is kept
    assert text_dates("nothing dated here, may it stay so") == []


def test_closeness_is_one_inside_the_period_and_halves_every_thirty_days_outside() -> None:
    may = Period(2023, 5)
    assert closeness(may, [dt.date(2023, 5, 20)]) == 1.0
    assert closeness(may, [dt.date(2023, 6, 30)]) == pytest.approx(0.5)
    assert closeness(may, [dt.date(2024, 5, 20), dt.date(2023, 5, 2)]) == 1.0  # the nearest date counts
    assert closeness(Period(None, 6), [dt.date(2022, 6, 9)]) == 1.0  # no year: the date's own
    assert closeness(Period(None, 2, 30), [dt.date(2023, 2, 1)]) == 0.0  # no such day
    assert closeness(None, [dt.date(2023, 5, 20)]) == 0.0 and closeness(may, []) == 0.0


def test_hostile_and_cjk_text_never_raises() -> None:
    for text in [*HOSTILE, "9999-99-99", "0 may, 1999 32 jan 2020", "Mayday 2023-13-45", "年月日" * 50]:
        query_period(text)
        text_dates(text)


def test_the_turn_dated_in_the_period_the_question_names_comes_first() -> None:
    query = "What did Ana paint in May 2023?"
    texts = {
        "april": "3:00 pm on 20 April, 2023\nAna: I painted a sunset over the lake.",
        "may": "1:56 pm on 8 May, 2023\nAna: I painted a sunrise over the lake.",
        **{f"f{i}": f"Quarterly report {i}: revenue and costs." for i in range(4)},
    }
    candidates = [
        Scored("april", score=1.0),
        Scored("may", score=0.95),
        *(Scored(f"f{i}", score=0.1) for i in range(4)),
    ]
    rows = features(plan_query(query), query, candidates, texts)
    dated = [dict(zip(FEATURES, row, strict=True))["date"] for row in rows]
    assert dated[1] == 1.0 and 0.0 < dated[0] < 1.0 and dated[2:] == [0.0] * 4

    # The fitted re-ranker (the date's weight among its others) puts the turn of May first.
    ranked = rerank(plan_query(query), query, candidates, lambda ids: {i: texts[i] for i in ids})
    assert [c.doc_id for c in ranked[:2]] == ["may", "april"]
