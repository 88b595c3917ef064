"""Planning helpers over hybrid search and plans, on both backends, with the bundled static embedder."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.models import Doc
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.walls import frontmatter as fm

REDIS = (
    "Redis pub/sub silently drops messages when a subscriber reconnects, so clients miss events. "
    "Redis Streams with consumer groups keep a backlog and survive reconnects."
)
REGRESSION = """---
title: Session refresh regression
---
# Session refresh regression

After upgrading the auth library to v5 the session refresh broke: users were logged out every five minutes.
We reverted to v4 and pinned it until the token rotation bug is fixed upstream.
"""
PASTA = "# Pasta\n\nBoil water, add salt, cook the spaghetti for nine minutes and serve with parmesan.\n"


@pytest.fixture
def planner(root: Path, clock, database_url: str | None):
    """A store on each backend with the bundled static embedder and the exact vector scan."""
    config = RetrievalConfig(embedder="static", vector_engine="exact")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as opened:
        yield opened


def _note(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _stock(store: Store, root: Path) -> str:
    captured = store.planning.capture_research("Redis pub/sub for live updates", REDIS, sources=["redis.io/streams"])
    _note(root, "decisions/2026-05-02-session-refresh-regression.md", REGRESSION)
    _note(root, "decisions/2026-05-03-pasta.md", PASTA)
    return captured.doc_id


def test_captured_research_is_written_to_insights_and_indexed(planner, root):
    done = planner.planning.capture_research(
        "Redis pub/sub for live updates",
        REDIS,
        sources=["https://redis.io/docs/streams", " "],
        tags={"area": "realtime"},
    )

    assert done.path == "insights/2026-06-10-redis-pub-sub-for-live-updates-research.md"
    assert done.indexed and done.chunks >= 1
    front, body = fm.parse((root / done.path).read_text(encoding="utf-8"))
    assert front["tags"] == {"type": "research", "category": "insights", "status": "captured", "area": "realtime"}
    assert "## Key Findings" in body and REDIS in body
    assert "- https://redis.io/docs/streams" in body
    assert "## Next Steps" in body
    with planner.db.read() as session:
        row = session.get(Doc, done.doc_id)
    assert (row.doc_type, row.filepath) == ("research", done.path)
    assert planner.search.universal("consumer groups backlog").hits[0].doc_id == done.doc_id
    # The reconcile of workspace markdown sees the same file and leaves its document alone.
    assert planner.markdown.reconcile().added == 0
    again = planner.planning.capture_research("Redis pub/sub for live updates", "more")
    assert again.path.endswith("-research-2.md")


def test_conflicts_are_found_by_meaning_and_unrelated_notes_stay_out(planner, root):
    research_id = _stock(planner, root)

    found = planner.planning.detect_conflicts("broadcast messages to subscribers")

    ids = [s.doc_id for s in found.conflicts]
    assert research_id in ids
    assert "2026-05-03-pasta" not in ids
    hit = found.conflicts[ids.index(research_id)]
    assert hit.filepath.startswith("insights/")
    assert "semantic neighbour" in hit.why


def test_regression_history_finds_the_note_without_its_words_and_quotes_the_evidence(planner, root):
    _stock(planner, root)

    history = planner.planning.regression_history("people getting kicked out of their accounts")

    (hit,) = history.regressions
    assert hit.doc_id == "2026-05-02-session-refresh-regression"
    assert hit.why.startswith("semantic neighbour")  # no word of the question is in the note
    assert hit.excerpt.startswith("After upgrading the auth library to v5 the session refresh broke")
    assert "regression" in hit.labels
    assert planner.planning.regression_history("spaghetti dinner").regressions == ()


def test_nothing_stored_means_no_conflicts(planner):
    assert planner.planning.detect_conflicts("anything at all").conflicts == ()


def test_duplicates_separate_finished_work_from_open_work(planner, root):
    _note(
        root,
        "features/csv-export.md",
        "---\ntitle: CSV export\nstatus: done\n---\n# CSV export\n\n"
        "Implemented: users download their reports as CSV.\n",
    )
    _note(
        root,
        "features/pdf-export.md",
        "---\ntitle: PDF export\nstatus: backlog\n---\n# PDF export\n\nUsers want their reports as PDF files.\n",
    )

    found = planner.planning.check_duplicate("let people download reports as spreadsheets")

    assert [s.doc_id for s in found.finished] == ["csv-export"]
    assert "pdf-export" in [s.doc_id for s in found.unfinished]


def test_whats_next_gathers_plans_blockers_questions_and_related_work(planner, root, clock):
    stale = planner.plans.create("Old migration", ["copy rows", "switch reads"])
    clock.advance(timedelta(days=10))
    plan = planner.plans.create("Live updates", ["pick a transport", "fan out events"])
    planner.plans.check(1, plan_id=plan.id)
    planner.plans.add_blocker(2, "waiting for the infra budget", plan_id=plan.id)
    question = planner.working.questions.add("Which broker do we run?", priority="blocker").question
    research_id = _stock(planner, root)
    _note(root, "features/notifications.md", "---\nstatus: active\n---\n# Notifications\n\nPush events to browsers.\n")

    done = planner.planning.whats_next("real-time events for subscribers")

    kinds = [(s.kind, s.sources) for s in done.suggestions]
    assert ("plan", (plan.id,)) in kinds
    assert ("blocker", (plan.id,)) in kinds
    assert ("stale", (stale.id,)) in kinds
    assert ("question", (question.id,)) in kinds
    assert research_id in [s.doc_id for s in done.research]
    assert "notifications" in [s.doc_id for s in done.related]
    next_step = next(s for s in done.suggestions if s.kind == "plan" and s.sources == (plan.id,))
    assert "next is 2. fan out events" in next_step.text


def test_a_feature_plan_cites_research_conflicts_and_plans_and_is_saved(planner, root):
    research_id = _stock(planner, root)
    planner.plans.create("Message fan-out to subscribers", ["evaluate brokers", "prototype broadcast"])

    done, markdown = planner.planning.plan_feature(
        "broadcast messages to subscribers", context="browsers reconnect often"
    )

    assert done.path == "planning/2026-06-10-22h23-wednesday-broadcast-messages-to-subscribers-plan.md"
    text = (root / done.path).read_text(encoding="utf-8")
    assert text == markdown
    assert research_id in [s.doc_id for s in done.research]
    assert "## Existing Research" in text and research_id in text
    assert "## Implementation Steps" in text
    assert "## Sources" in text
    assert [m.title for m in done.plans] == ["Message fan-out to subscribers"]
    with planner.db.read() as session:
        assert session.get(Doc, done.doc_id).doc_type == "plan"
    other, other_markdown = planner.planning.plan_feature(
        "broadcast messages to subscribers", approach="do_new_research"
    )
    assert other.path.endswith("-plan-2.md")
    assert "## Research To Do" in other_markdown


def test_bad_questions_are_refused(planner):
    for call in (
        lambda: planner.planning.detect_conflicts("  "),
        lambda: planner.planning.regression_history(""),
        lambda: planner.planning.check_duplicate(" "),
        lambda: planner.planning.capture_research("topic", " "),
        lambda: planner.planning.plan_feature("x", approach="guess"),
        lambda: planner.planning.whats_next("x" * 20_001),
    ):
        with pytest.raises(InvalidArgumentError):
            call()
