"""The second stage: the fused candidates re-ordered by the fitted linear model."""

from __future__ import annotations

from dokoro_store.index.fulltext.planner import plan_query
from dokoro_store.index.ranking.hybrid import Scored
from dokoro_store.index.ranking.rerank import (
    FEATURES,
    RERANK_DEPTH,
    WEIGHTS,
    asks,
    coverage,
    features,
    is_temporal_question,
    local_idf_coverage,
    named_speakers,
    proximity,
    rerank,
)

QUERY = "Which city is Ana travelling to for the pottery workshop?"
TEXTS = {
    "noise": "Ben: My cat knocked over a plant this morning and the soil went everywhere.",
    "answer": "Ana: I'm flying to Lisbon for a week of ceramics classes at a pottery studio.",
    "tail": "Release checklist: changelog, version bump, tag, publish.",
}


FILLER_TEXTS = {f"f{i}": f"Quarterly report {i}: revenue, costs and the hiring plan." for i in range(4)}
FILLER = [Scored(f"f{i}", score=0.1) for i in range(4)]  # enough candidates for the static cosine's scale


def _texts(ids):
    return {doc_id: {**TEXTS, **FILLER_TEXTS}[doc_id] for doc_id in ids}


def test_the_candidate_closer_in_meaning_overtakes_a_slightly_better_fused_one():
    candidates = [Scored("noise", score=1.0, text=0.5), Scored("answer", score=0.9, text=0.4), *FILLER]

    ranked = rerank(plan_query(QUERY), QUERY, candidates, _texts)

    assert [c.doc_id for c in ranked][:2] == ["answer", "noise"]
    assert ranked[0].score > ranked[1].score


def test_a_clear_lead_in_the_fused_score_is_kept():
    candidates = [Scored("noise", score=5.0, text=1.0), Scored("answer", score=0.9, text=0.4), *FILLER]

    ranked = rerank(plan_query(QUERY), QUERY, candidates, _texts)

    assert [c.doc_id for c in ranked][:2] == ["noise", "answer"]


def test_without_vectors_the_static_model_is_not_consulted(monkeypatch):
    import dokoro_store.index.embedders.static as static

    def refuse(*args, **kwargs):
        raise AssertionError("the static model was loaded although vectors are off")

    monkeypatch.setattr(static, "StaticEmbedder", refuse)
    candidates = [Scored("noise", score=1.0, text=0.5), Scored("answer", score=0.9, text=0.4), *FILLER]

    rows = features(plan_query(QUERY), QUERY, candidates, _texts([c.doc_id for c in candidates]), vectors=False)
    ranked = rerank(plan_query(QUERY), QUERY, candidates, _texts, vectors=False)

    named = [dict(zip(FEATURES, row, strict=True)) for row in rows]
    assert all(n["static"] == 0.0 and n["lifter_static"] == 0.0 for n in named)
    # The text-only features still speak: the answer holds the rare query terms and names Ana.
    assert [c.doc_id for c in ranked][:2] == ["answer", "noise"]


def test_the_reordered_block_keeps_its_scores_above_the_rest():
    head = [Scored(f"h{i}", score=3.0 - i * 0.01) for i in range(RERANK_DEPTH)]
    tail = [Scored("tail", score=2.99)]
    texts = {f"h{i}": f"text number {i}" for i in range(RERANK_DEPTH)} | {"tail": TEXTS["tail"]}

    ranked = rerank(plan_query("text"), "text", head + tail, lambda ids: {i: texts[i] for i in ids})

    assert ranked[-1].doc_id == "tail"
    assert min(c.score for c in ranked[:-1]) > ranked[-1].score
    assert [c.score for c in ranked] == sorted((c.score for c in ranked), reverse=True)


def test_features_describe_every_candidate_and_the_weights_match_them():
    candidates = [Scored("answer", text=0.4, vector=0.8, lift=0.1, graph=True), Scored("noise"), *FILLER]

    rows = features(plan_query(QUERY), QUERY, candidates, _texts([c.doc_id for c in candidates]))

    assert len(WEIGHTS) == len(FEATURES) == len(rows[0])
    named = dict(zip(FEATURES, rows[0], strict=True))
    assert named["text"] == 0.4 and named["vector"] == 0.8 and named["graph"] == 1.0
    statics = [dict(zip(FEATURES, row, strict=True))["static"] for row in rows]
    assert named["static"] == 1.0 == max(statics) and min(statics) == 0.0  # rescaled over the candidates


def test_coverage_counts_query_terms_in_any_script_and_never_raises():
    assert coverage(plan_query("pottery workshop Lisbon"), TEXTS["answer"]) == 2 / 3
    assert coverage(plan_query("陶芸 ワークショップ"), "週末に陶芸のワークショップへ行った") == 1.0
    assert coverage(plan_query('"; DROP TABLE docs; -- NEAR(*'), "drop table docs") > 0
    assert coverage(plan_query("the of and"), "") == 0.0


HOSTILE = [
    '"; DROP TABLE docs; -- NEAR(*',
    "\x00\x01 ^^^ :::",
    "a" * 5000,
    "",
    "   ",
    "陶芸 ワークショップ",
    "도자기를 배웠어요",
]


def test_rare_terms_weigh_more_than_terms_every_candidate_holds():
    planned = plan_query("Did Ana enjoy the pottery class?")
    bodies = [
        "Ana: the pottery class was wonderful",
        "Ana: I went shopping today",
        "Ana: my class starts on Monday",
        "Ana: I enjoy long walks",
    ]

    rare = local_idf_coverage(planned, bodies)

    # "ana" is in every body: the body holding the rare "pottery" beats one holding "enjoy" + "ana".
    assert rare[0] == max(rare) and rare[0] > rare[3] > rare[1]
    assert all(0.0 <= value <= 1.0 for value in rare)


def test_query_weighting_never_raises_on_hostile_or_cjk_text_and_stays_in_range():
    bodies = [*HOSTILE, "週末に陶芸のワークショップへ行った", "drop table docs"]
    for query in HOSTILE:
        planned = plan_query(query)
        rare = local_idf_coverage(planned, bodies)
        assert len(rare) == len(bodies) and all(0.0 <= v <= 1.0 for v in rare)
        assert all(0.0 <= proximity(planned, body) <= 1.0 for body in bodies)
        assert len(named_speakers(query, bodies)) == len(bodies)
    cjk = local_idf_coverage(plan_query("陶芸 ワークショップ"), bodies)
    assert cjk[bodies.index("週末に陶芸のワークショップへ行った")] == 1.0
    assert local_idf_coverage(plan_query("the of and"), []) == []


def test_proximity_is_the_inverse_gap_between_two_query_terms():
    planned = plan_query("pottery workshop")
    assert proximity(planned, "a pottery workshop in Lisbon") == 1.0
    assert proximity(planned, "pottery, then lunch, then a workshop") == 1 / 5
    assert proximity(planned, "only pottery here") == 0.0
    assert proximity(plan_query("pottery"), "pottery pottery") == 0.0  # one term: no pair


def test_temporal_questions_and_speakers_are_recognised():
    assert is_temporal_question("When did Ana go to Lisbon?")
    assert is_temporal_question("How long ago was the release?")
    assert not is_temporal_question("Which city did Ana visit?")
    bodies = [
        "2023-05-08\nAna: I flew to Lisbon",
        "\nBen: hi",
        "\nTODO: ship it",
        "\nno speaker here",
        "t\nAna Maria: hello",
    ]
    assert named_speakers("What did Ana do in Lisbon?", bodies) == [True, False, False, False, False]
    assert named_speakers("Did Ana Maria say hello?", bodies)[4]


def _order(query: str, candidates: list[Scored], texts: dict[str, str], weights: dict[str, float]) -> list[str]:
    """The first two candidates by fused score plus ``weights`` · features (the re-ranker's model)."""
    rows = features(plan_query(query), query, candidates, texts)
    values = {
        c.doc_id: c.score + sum(weights.get(name, 0.0) * x for name, x in zip(FEATURES, row, strict=True))
        for c, row in zip(candidates, rows, strict=True)
    }
    return sorted(values, key=lambda d: -values[d])[:2]


def test_the_temporal_and_speaker_features_lift_the_turn_that_answers_when():
    query = "When did Ana fly to Lisbon?"
    texts = {
        "plan": "8 May 2023\nBen: Ana said she wants to fly to Lisbon someday, maybe to see the ceramics.",
        "answer": "8 May 2023\nAna: I flew to Lisbon last weekend!",
        **FILLER_TEXTS,
    }

    def candidates() -> list[Scored]:
        return [
            Scored("plan", score=1.0, text=0.5),
            Scored("answer", score=0.95, text=0.45),
            *(Scored(f"f{i}", score=0.1) for i in range(4)),
        ]

    assert _order(query, candidates(), texts, {"temporal": 1.0, "speaker": 1.0}) == ["answer", "plan"]
    assert _order(query, candidates(), texts, {}) == ["plan", "answer"]
    ranked = rerank(plan_query(query), query, candidates(), lambda ids: {i: texts[i] for i in ids})
    assert [c.doc_id for c in ranked][:2] == ["answer", "plan"]  # the fitted weights


def test_the_lifter_features_describe_the_neighbour_that_lifted_a_candidate():
    candidates = [
        Scored("answer", score=1.0, lift=0.3, lifted_by="noise"),
        Scored("noise", score=0.9),
        Scored("tail", score=0.8, lift=0.2, lifted_by="elsewhere"),  # lifted by a non-candidate
        *FILLER,
    ]
    rows = features(plan_query(QUERY), QUERY, candidates, _texts([c.doc_id for c in candidates]))
    named = [dict(zip(FEATURES, row, strict=True)) for row in rows]

    assert named[0]["lifter_static"] == named[1]["static"] and named[0]["lifter_rare"] == named[1]["rare"]
    assert named[1]["lifter_rare"] == 0.0 and named[2]["lifter_rare"] == 0.0


def test_a_date_title_repeated_in_the_content_neither_looks_temporal_nor_hides_the_speaker():
    # A memory's document: its title, then the content repeating the title, the body, its entities.
    title = "8 May 2023 (D1:3)"
    memory = f"{title}\n{title}\n\nAna: I flew to Lisbon!\n\nEntities: Ana"
    dated = f"{title}\n{title}\n\nAna: we went last weekend"
    candidates = [Scored("m", score=1.0), Scored("d", score=0.9), *FILLER]
    texts = {"m": memory, "d": dated, **FILLER_TEXTS}

    rows = features(plan_query("When did Ana fly?"), "When did Ana fly?", candidates, texts)
    named = [dict(zip(FEATURES, row, strict=True)) for row in rows]

    assert named[0]["speaker"] == 1.0 and named[1]["speaker"] == 1.0
    assert named[0]["temporal"] == 0.0 and named[1]["temporal"] == 1.0
    assert named_speakers("What did Ben say?", [memory]) == [False]


def test_only_a_chat_line_opening_with_a_name_counts_as_a_speaker() -> None:
    # The query names the label in each case: a label is still no speaker.
    labels = [
        "\nTODO: fix it",
        "\nNote: the release moved to Friday",
        "\nFIXME: the flaky test",
        "\nSummary: we chose SQLite",
        "\nQ: when is the release?",
        "\nhttp: the port is 80",
        "\nkey: value",
    ]
    for body in labels:
        label = body.strip().split(":")[0]
        assert named_speakers(f"What does the {label} say about it?", [body]) == [False], body
    speakers = [
        "\nAna: I flew to Lisbon",
        "\nAna Maria: hello",
        "\nSean O'Neil: see you",
        "\n陈伟: 我们明天见",
    ]
    assert named_speakers("Did Ana, Ana Maria, Sean O'Neil or 陈伟 say it?", speakers) == [True] * 4
    # Only the first line of the content: a memory's trailing "Entities: Ana" is no speaker line.
    memory = "8 May 2023\nWe went to the market.\n\nEntities: Ana"
    assert named_speakers("Which entities did Ana name?", [memory]) == [False]


def test_the_speaker_feature_does_not_lift_a_note_whose_label_the_query_names() -> None:
    query = "What is left to do on the TODO list?"
    texts = {
        "todo": "\nTODO: fix it",
        "list": "\nThe list of what is left to do: the docs and the release notes.",
        **FILLER_TEXTS,
    }
    candidates = [Scored("todo", score=1.0), Scored("list", score=0.99), *FILLER]
    rows = features(plan_query(query), query, candidates, texts)
    assert [dict(zip(FEATURES, row, strict=True))["speaker"] for row in rows[:2]] == [0.0, 0.0]


def test_a_text_asks_when_its_last_sentence_is_a_question() -> None:
    assert asks("8 May 2023\nBen: Where are you going for the pottery workshop?")
    assert asks("Chat\nBen: Nice! Did you go? [shares a photo of a kiln.]")  # an aside is not a sentence
    assert asks("T\nT\n\nAna: What about you?\n\nEntities: Ana")  # a memory: its entities line ends nothing
    assert asks("Chat\n你去哪里？")
    assert not asks("Chat\nAna: Did you go? I did, last week.")  # asked, then answered
    assert not asks("Note\nSee https://example.com/?page=1 for the plan")
    assert not asks("Where is it?\nLisbon.")  # the title's question is not the text's


REPLY_TEXTS = {
    "question": "Chat\nBen: Where are you going for the pottery workshop?",
    "reply": "Chat\nAna: Lisbon, the first week of June!",
    "statement": "Chat\nBen: The pottery workshop was fun.",
    "after": "Chat\nAna: Great.",
    **FILLER_TEXTS,
}


def test_the_reply_feature_is_the_matching_question_s_rare_coverage_and_only_after_a_question() -> None:
    query = "pottery workshop"
    candidates = [
        Scored("question", score=1.0),
        Scored("statement", score=0.9),
        Scored("reply", score=0.5, previous="question"),
        Scored("after", score=0.4, previous="statement"),  # after a turn that does not ask
        Scored("f0", score=0.1, previous="elsewhere"),  # after a text that is no candidate
        *FILLER[1:],
    ]

    rows = features(plan_query(query), query, candidates, REPLY_TEXTS)
    named = {c.doc_id: dict(zip(FEATURES, row, strict=True)) for c, row in zip(candidates, rows, strict=True)}

    assert named["question"]["asks"] == 1.0 and named["statement"]["asks"] == 0.0
    assert named["reply"]["reply"] == named["question"]["rare"] > 0
    assert named["after"]["reply"] == 0.0 and named["f0"]["reply"] == 0.0 and named["question"]["reply"] == 0.0


def test_a_question_that_matches_the_query_gives_way_to_its_reply() -> None:
    query = "pottery workshop"
    only = {"asks": WEIGHTS[FEATURES.index("asks")], "reply": WEIGHTS[FEATURES.index("reply")]}

    def candidates() -> list[Scored]:
        return [Scored("question", score=1.0, text=1.0), Scored("reply", score=0.5, previous="question"), *FILLER]

    texts = {i: REPLY_TEXTS[i] for i in ("question", "reply", *FILLER_TEXTS)}
    assert _order(query, candidates(), texts, only) == ["reply", "question"]
    assert _order(query, candidates(), texts, {}) == ["question", "reply"]
    ranked = rerank(plan_query(query), query, candidates(), lambda ids: {i: texts[i] for i in ids})
    assert [c.doc_id for c in ranked][:2] == ["reply", "question"]  # the fitted weights
