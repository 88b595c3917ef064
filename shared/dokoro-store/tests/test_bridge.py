"""The tachibot bridge on both backends: research as documents, imported plans, context for a query."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.retrieval import RetrievalConfig

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
ANSWER = (
    "PostgreSQL advisory locks are held per session or per transaction. pg_advisory_xact_lock releases "
    "at commit, so a crashed worker never leaves a lock behind; pg_try_advisory_lock returns at once."
)
ANSWER_2 = ANSWER + " Use a bigint key derived from the job id; two ints also work."


@pytest.fixture
def bridged(root: Path, clock, database_url: str | None):
    """A store on each backend with the bundled static embedder and the exact vector scan."""
    config = RetrievalConfig(embedder="static", vector_engine="exact")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as opened:
        yield opened


def test_a_research_answer_becomes_the_document_of_its_source_and_query(bridged: Store):
    done = bridged.bridge.index_research(
        "perplexity_ask", "How do advisory locks work?", ANSWER, metadata={"model": "sonar"}
    )

    digest = hashlib.sha256(b"perplexity_ask:How do advisory locks work?").hexdigest()[:12]
    assert done.doc_id == f"research-perplexity_ask-{digest}"
    assert done.action == "indexed"
    assert done.chunks >= 1 and done.tokens > 0 and done.vectors == done.chunks
    doc = bridged.docs.get(done.doc_id)
    assert doc.title == "[perplexity_ask] How do advisory locks work?"
    assert doc.doc_type == "research" and doc.status == "active"
    assert doc.filepath == f"bridge://research/perplexity_ask/{digest}"
    assert doc.metadata_json == {"model": "sonar", "source": "perplexity_ask", "query": "How do advisory locks work?"}
    assert doc.content == ANSWER


def test_the_same_answer_again_writes_nothing_and_a_new_one_replaces_it(bridged: Store, clock):
    first = bridged.bridge.index_research("grok_search", "advisory locks", ANSWER)
    written_at = bridged.docs.get(first.doc_id).updated_at
    clock.advance(timedelta(minutes=5))

    again = bridged.bridge.index_research("grok_search", "advisory locks", ANSWER)
    assert again.doc_id == first.doc_id
    assert again.action == "unchanged"
    assert (again.chunks, again.vectors) == (0, 0)
    assert bridged.docs.get(first.doc_id).updated_at == written_at

    changed = bridged.bridge.index_research("grok_search", "advisory locks", ANSWER_2)
    assert changed.doc_id == first.doc_id
    assert changed.action == "reindexed"
    assert changed.chunks >= 1
    assert bridged.docs.get(first.doc_id).content == ANSWER_2
    assert bridged.docs.stats().total_docs == 1


def test_another_source_or_query_is_another_document(bridged: Store):
    a = bridged.bridge.index_research("grok_search", "advisory locks", ANSWER)
    b = bridged.bridge.index_research("openai_search", "advisory locks", ANSWER)
    c = bridged.bridge.index_research("grok_search", "advisory locks in MySQL", ANSWER)

    assert len({a.doc_id, b.doc_id, c.doc_id}) == 3
    assert {a.action, b.action, c.action} == {"indexed"}


def test_indexed_research_is_found_by_hybrid_search(bridged: Store):
    done = bridged.bridge.index_research("perplexity_research", "advisory locks", ANSWER)

    found = bridged.search.universal("which postgres lock is released at commit", limit=3)

    assert found.hits[0].doc_id == done.doc_id


def test_secrets_in_a_research_answer_its_query_and_metadata_are_redacted(bridged: Store):
    done = bridged.bridge.index_research(
        "gemini_search",
        f"why does {GITHUB} fail",
        f"The token {GITHUB} was revoked.",
        metadata={"headers": {"auth": GITHUB}, "urls": ["https://example.com"]},
    )

    doc = bridged.docs.get(done.doc_id)
    stored = json.dumps([doc.title, doc.content, doc.metadata_json])
    assert GITHUB not in stored
    assert GITHUB not in done.model_dump_json()
    assert len(done.redacted) == 3
    assert doc.metadata_json["urls"] == ["https://example.com"]


@pytest.mark.parametrize(
    ("source", "query", "content", "fix"),
    [
        ("bing_search", "q", "answer", "source must be one of"),
        ("grok_search", "  ", "answer", "query must not be empty"),
        ("grok_search", "q", "\n", "content must not be empty"),
    ],
)
def test_research_without_a_known_source_a_query_or_content_is_refused(bridged: Store, source, query, content, fix):
    with pytest.raises(InvalidArgumentError, match=fix):
        bridged.bridge.index_research(source, query, content)
    assert bridged.docs.stats().total_docs == 0


def test_an_imported_plan_is_an_ordinary_plan_with_its_mirror(bridged: Store, root: Path):
    imported = bridged.bridge.import_plan(
        "Move jobs to advisory locks", ["Spike", "Migrate the scheduler", "Remove the lock table"]
    )

    assert imported.plan_id.startswith("plan-2026-06-10-22h23-wednesday-move-jobs-to-advisory-locks")
    assert imported.status == "active"
    assert imported.items == ["Spike", "Migrate the scheduler", "Remove the lock table"]
    assert imported.description == "Imported from tachibot planner_maker"
    assert imported.mirror == f".mcp/plans/{imported.plan_id}.json"
    mirror = json.loads((root / imported.mirror).read_text(encoding="utf-8"))
    assert [item["text"] for item in mirror["items"]] == imported.items
    assert mirror["status"] == "active"
    index = json.loads((root / ".mcp" / "plans" / "index.json").read_text(encoding="utf-8"))
    assert index[imported.plan_id] == "Move jobs to advisory locks"

    checked = bridged.plans.check(1, plan_id=imported.plan_id)
    assert checked.plan.done == 1
    assert [p.id for p in bridged.plans.list()] == [imported.plan_id]


def test_a_plan_imported_as_draft_stays_a_draft_and_names_its_file(bridged: Store):
    imported = bridged.bridge.import_plan(
        "Rate limiter", ["Design", "Build"], status="draft", filepath="plans/rate-limiter.md"
    )

    view = bridged.plans.get(imported.plan_id)
    assert view is not None and view.status == "draft"
    assert view.description == "Imported from tachibot planner_maker (plans/rate-limiter.md)"


@pytest.mark.parametrize(
    ("phases", "status", "fix"),
    [([], "active", "at least one phase"), (["a"], "done", "draft or active"), (["a", " "], "active", "item 2")],
)
def test_an_import_without_phases_or_with_an_unknown_status_is_refused(bridged: Store, phases, status, fix):
    with pytest.raises(InvalidArgumentError, match=fix):
        bridged.bridge.import_plan("Rate limiter", phases, status=status)
    assert bridged.plans.list() == []


def test_secrets_in_an_imported_plan_are_redacted(bridged: Store, root: Path):
    imported = bridged.bridge.import_plan("Rotate keys", [f"Revoke {GITHUB}", "Issue new ones"])

    assert GITHUB not in imported.model_dump_json()
    assert GITHUB not in (root / imported.mirror).read_text(encoding="utf-8")
    assert imported.redacted == ["github-token"]


def _stock(store: Store) -> dict[str, str]:
    research = store.bridge.index_research("perplexity_ask", "advisory locks", ANSWER).doc_id
    store.docs.save(
        "plan-doc-locks",
        "Plan: replace the jobs lock table with PostgreSQL advisory locks released at commit.",
        title="Plan: advisory locks",
        doc_type="plan",
    )
    store.docs.save(
        "note-locks",
        "Note: the scheduler holds a lock row per job; advisory locks would release at commit on a crash.",
        title="Scheduler locks",
        doc_type="note",
    )
    store.docs.index_docs()
    plan = store.bridge.import_plan("Advisory locks for jobs", ["Spike advisory locks", "Migrate the scheduler"])
    return {"research": research, "plan_doc": "plan-doc-locks", "note": "note-locks", "plan": plan.plan_id}


def test_context_gathers_documents_and_the_live_plans_close_to_the_query(bridged: Store):
    ids = _stock(bridged)

    context = bridged.bridge.get_context("advisory locks released at commit", limit=5)

    assert {e.doc_id for e in context.entries} == {ids["research"], ids["plan_doc"], ids["note"]}
    assert [e.rank for e in context.entries] == [1, 2, 3]
    assert [p.plan_id for p in context.plans] == [ids["plan"]]
    assert context.plans[0].next_item == "Spike advisory locks"
    assert (context.plans[0].done, context.plans[0].total) == (0, 2)


def test_context_leaves_out_research_or_plans_when_asked(bridged: Store):
    ids = _stock(bridged)

    no_research = bridged.bridge.get_context("advisory locks", include_research=False)
    no_plans = bridged.bridge.get_context("advisory locks", include_plans=False)

    assert ids["research"] not in {e.doc_id for e in no_research.entries}
    assert ids["plan_doc"] in {e.doc_id for e in no_research.entries}
    assert {e.doc_type for e in no_plans.entries} == {"research", "note"}
    assert no_plans.plans == []


def test_context_returns_at_most_limit_entries(bridged: Store):
    _stock(bridged)

    context = bridged.bridge.get_context("advisory locks", limit=1)

    assert len(context.entries) == 1
    assert len(context.plans) <= 1
    with pytest.raises(InvalidArgumentError, match="limit"):
        bridged.bridge.get_context("advisory locks", limit=0)
