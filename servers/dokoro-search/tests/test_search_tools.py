"""Every search tool through the MCP client."""

from __future__ import annotations

import os
import subprocess

import pytest

pytestmark = pytest.mark.anyio

BOTH = pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)


async def index(call, doc_id: str, content: str, title: str = "Untitled"):
    return await call("search_index_content", doc_id=doc_id, content=content, title=title)


@BOTH
async def test_search_universal_explains_every_hit(call):
    await index(call, "auth", "We chose JWT access tokens with refresh token rotation.", "Auth decision")
    await index(call, "garden", "Tomatoes and basil grow on the balcony.", "Garden")

    outcome = await call("search_universal", query="refresh token rotation", limit=2)

    data = outcome.structured_content
    top = data["results"][0]
    assert top["doc_id"] == "auth" and top["source"] == "hybrid"
    assert "matched terms" in top["why"] and "semantic neighbour" in top["why"]
    assert top["fts_score"] == 1.0 and top["vector_score"] > 0 and top["score"] > 0
    assert data["mode"] == "hybrid" and data["embedder"].startswith("onnx:")  # the bundled transformer
    text = outcome.content[0].text
    assert "**1. Auth decision**\nID: auth | Source: hybrid | Relevance: " in text and "Why:" in text
    assert "|auth" not in text  # the title is clean; the id has a field of its own


@BOTH
async def test_search_universal_says_no_close_match_when_nothing_matches_well(call):
    await index(call, "auth", "We chose JWT access tokens with refresh token rotation.", "Auth decision")
    await index(call, "garden", "Tomatoes and basil grow on the balcony.", "Garden")

    nothing = await call("search_universal", query="pnpm", limit=2)
    matching = await call("search_universal", query="refresh token rotation", limit=2)

    assert nothing.content[0].text.startswith("🔎 No close match for 'pnpm' (no hit reaches relevance 0.15)")
    assert nothing.structured_content["close_match"] is False
    assert all(r["relevance"] < 0.15 for r in nothing.structured_content["results"])
    assert matching.structured_content["close_match"] is True
    top = matching.structured_content["results"][0]
    assert top["relevance"] >= 0.3 and f"Relevance: {top['relevance']:.2f}" in matching.content[0].text


async def test_search_universal_modes_and_an_empty_result_hint(call):
    await index(call, "db", "PostgreSQL is the team database.", "Database")

    keyword = (await call("search_universal", query="database", mode="keyword")).structured_content
    nothing = await call("search_universal", query="zebra", mode="keyword")

    assert [r["source"] for r in keyword["results"]] == ["keyword"]
    assert nothing.structured_content["results"] == []
    assert "search_reindex" in nothing.content[0].text


@pytest.mark.parametrize(
    "query", ['"unbalanced', "a AND b", "NEAR(x y)", "*", "-token", '"', "회의를 했어요", "東京に行きました", "100%"]
)
async def test_hostile_queries_through_the_tool_never_error(call, query):
    await index(call, "ko", "오늘 회의를 했어요.", "회의")

    await call("search_universal", query=query)


async def test_search_universal_refuses_bad_arguments(fail):
    assert "query" in await fail("search_universal", query="")
    assert "limit" in await fail("search_universal", query="x", limit=0)
    assert "mode" in await fail("search_universal", query="x", mode="fuzzy")


async def test_index_content_works_for_an_id_with_no_row_yet(call, store):
    outcome = await index(call, "brand-new", "Fresh research notes on caching.", "Caching")

    data = outcome.structured_content
    # Written before its vectors: they are embedded just behind the write (write-behind).
    assert data["doc_id"] == "brand-new" and data["chunks"] == 1 and data["vectors"] == 0 and data["vectors_behind"]
    assert "embedded just behind this write" in outcome.content[0].text
    assert store.docs.get("brand-new").title == "Caching"
    found = await call("search_universal", query="caching research", mode="semantic")  # embeds what waits first
    assert "brand-new" in found.content[0].text
    assert "Content Indexed" in outcome.content[0].text


@BOTH
async def test_index_content_places_texts_of_a_thread_and_search_lifts_the_reply_beside_a_match(call):
    turns = [
        "Ana: I finally booked the trip we talked about last winter.",
        "Ben: Where are you going for the pottery workshop?",
        "Ana: Lisbon, the first week of June!",
        "Ben: Nice, I hear the food there is wonderful.",
    ]
    for i, text in enumerate(turns):
        at = f"2024-05-03T10:0{i}:00Z"
        placed = await call("search_index_content", doc_id=f"turn-{i}", content=text, title="Chat", thread="c1", at=at)
        assert placed.structured_content["thread"] == "c1" and placed.structured_content["thread_pos"] == i
        assert f"Thread: c1, place {i + 1}" in placed.content[0].text.replace("**", "")
    await index(call, "note", "Notes on the database migration plan for the billing service.", "Note")

    hits = (await call("search_universal", query="pottery workshop", limit=3)).structured_content["results"]

    # The reply that answers the question naming the topic comes first, the question right behind it.
    assert [h["doc_id"] for h in hits[:2]] == ["turn-2", "turn-1"]
    lifted = next(h for h in hits if h["doc_id"] == "turn-2")
    assert "beside turn-1" in lifted["why"]


async def test_index_content_refuses_at_without_a_thread_and_a_time_that_is_not_iso(fail):
    assert "pass thread too" in await fail("search_index_content", doc_id="x", content="text", at="2024-05-03")
    assert "ISO-8601" in await fail("search_index_content", doc_id="x", content="text", thread="c1", at="yesterday")


async def test_index_content_refuses_empty_content(fail):
    assert "content" in await fail("search_index_content", doc_id="x", content="   ")


@BOTH
async def test_search_reindex_indexes_changed_documents_and_files(call, root):
    (root / "decisions").mkdir(parents=True)
    (root / "decisions" / "adr-1.md").write_text("# ADR 1\nUse Valkey for sessions.\n")

    first = (await call("search_reindex")).structured_content
    again = (await call("search_reindex")).structured_content
    full = (await call("search_reindex", full=True)).structured_content

    assert first["files_added"] == 1 and first["indexed"] == 1
    assert again["files_added"] == 0 and again["indexed"] == 0
    assert full["full"] and full["indexed"] == 1 and full["vectors"] == 1
    assert full["total_docs"] == full["indexed_docs"] == 1


@BOTH
async def test_search_status_names_the_engines(call, store_url):
    await index(call, "a", "alpha")
    # The write's vectors come a moment after it (write-behind); a search embeds what still waits,
    # so from here the status has nothing pending, however slow the machine.
    await call("search_universal", query="alpha", limit=1)

    outcome = await call("search_status")

    data = outcome.structured_content
    assert data["embedder_kind"] == "onnx" and data["embedder_available"]
    assert data["embedder_model_file"].endswith("model.onnx") and data["reranker"]
    assert data["vector_engine"] == ("lancedb" if store_url is None else "pgvector")
    assert (data["total_docs"], data["indexed_docs"], data["pending_docs"]) == (1, 1, 0)
    assert "All documents are indexed." in outcome.content[0].text


async def test_search_status_says_when_the_vector_engine_lost_its_vectors_and_how_to_rebuild(make_client, root):
    import shutil

    async with make_client() as client:  # closing the server copies the vectors into LanceDB
        for doc_id, content in (("a", "alpha beta gamma"), ("b", "delta epsilon")):
            assert not (await client.call_tool("search_index_content", {"doc_id": doc_id, "content": content})).is_error
    shutil.rmtree(root / ".dokoro" / "db" / "vectors.lance")
    async with make_client() as client:
        outcome = await client.call_tool("search_status", {})
        await client.call_tool("search_reindex", {"full": True})
        after = await client.call_tool("search_status", {})

    text = outcome.content[0].text  # type: ignore[union-attr]
    assert "All documents are indexed." not in text
    assert "holds 0 of the 2 stored vectors" in text and "search_reindex full=true" in text
    assert outcome.structured_content["vectors_missing"]  # type: ignore[index]
    assert "All documents are indexed." in after.content[0].text  # type: ignore[union-attr]


async def test_a_file_edited_by_hand_is_found_by_the_next_search(call, root):
    (root / "insights").mkdir(parents=True)
    note = root / "insights" / "perf.md"
    note.write_text("# Perf\nThe parser is slow on big files.\n")
    await call("search_universal", query="parser")

    note.write_text("# Perf\nThe tokenizer is the bottleneck.\n")
    os.utime(note, ns=(10**18, 10**18))
    outcome = await call("search_universal", query="tokenizer bottleneck", mode="keyword")

    assert [r["doc_id"] for r in outcome.structured_content["results"]] == ["perf"]


async def test_a_dumped_session_is_searchable(call, store):
    # The workspace service (what dokoro_workspace_claim/session_log/workspace_dump call) writes the
    # session; the search server finds its daily note.
    workspace = store.working.workspace
    workspace.claim("migrate the billing export")
    workspace.log("switched the export to streaming CSV")
    dump = workspace.dump("done", keep_active=False)

    outcome = await call("search_universal", query="streaming CSV export")

    assert outcome.structured_content["results"][0]["filepath"] == dump.relative
    assert dump.relative.startswith("daily/")


async def test_search_with_another_embedder_matches_words_and_names_dokoro_reembed(make_client):
    async with make_client(embedder="hashing") as client:
        assert not (await client.call_tool("search_index_content", {"doc_id": "a", "content": "alpha"})).is_error
    async with make_client(embedder="static") as client:
        outcome = await client.call_tool("search_universal", {"query": "alpha"})
        semantic = await client.call_tool("search_universal", {"query": "alpha", "mode": "semantic"})
        status = await client.call_tool("search_status", {})
    assert not outcome.is_error and outcome.structured_content["results"][0]["doc_id"] == "a"  # type: ignore[index]
    text = "\n".join(block.text for block in outcome.content)  # type: ignore[union-attr]
    assert "dokoro reembed" in text and "full-text only" in text
    assert semantic.is_error and "dokoro reembed" in semantic.content[0].text  # type: ignore[union-attr]
    assert status.structured_content["stamp_mismatch"]  # type: ignore[index]


async def test_search_dokoros_and_list_recent_dokoros(call, root):
    (root / "decisions").mkdir(parents=True)
    (root / "decisions" / "a.md").write_text("---\ntitle: Use JWT\ntags:\n  type: decision\n---\nJWT for the API\n")

    found = await call("search_dokoros", query="jwt", type="decisions", tags={"type": "decision"})
    none = await call("search_dokoros", query="nothing-like-this")
    recent = await call("list_recent_dokoros", days=30)

    assert [r["file"] for r in found.structured_content["results"]] == ["decisions/a.md"]
    assert found.structured_content["results"][0]["title"] == "Use JWT"
    assert none.structured_content["results"] == [] and "No Matches" in none.content[0].text
    assert "decisions/a.md" in [r["file"] for r in recent.structured_content["results"]]


async def test_search_dokoros_refuses_an_unknown_type(fail):
    assert "type" in await fail("search_dokoros", type="posts")


def _git(path, *args):
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


async def test_ambient_context_runs_the_search_it_derives_from_git(call, cwd):
    repo = cwd / "project"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "feature/billing-export")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "export.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "Stream the billing export")
    await index(call, "billing", "The billing export streams CSV rows.", "Billing export")

    outcome = await call("dokoro_ambient_context", projectPath=str(repo))

    data = outcome.structured_content
    assert data["branch"] == "feature/billing-export"
    assert data["query"].startswith("feature billing export")
    assert data["results"][0]["doc_id"] == "billing"
    assert "Ambient Context" in outcome.content[0].text and "related document" in outcome.content[0].text


async def test_ambient_context_outside_a_repository_is_an_error(fail, cwd):
    assert "not a git repository" in await fail("dokoro_ambient_context", projectPath=str(cwd))


async def test_recall_in_a_search_install_ranks_by_the_bundled_transformer(store):
    # The search package brings the onnx extra, so the episodic service (what dokoro_session_recall
    # calls, in the unified server) ranks past sessions by meaning with the bundled transformer.
    store.episodic.add_summary("s-1", "m", "login bug: expired cookie")
    store.episodic.add_summary("s-2", "m", "billing login link moved")

    recalled = store.episodic.recall_ranked(query="login").result()

    assert recalled.ranking.startswith("relevance (similarity by onnx:")
    assert {e.session_id for e in recalled.episodes} == {"s-1", "s-2"}


@pytest.mark.anyio
async def test_the_graph_signal_of_search_universal_can_be_switched_off(call):
    await call("search_index_content", doc_id="doc-a", content="Timeout handling: a timeout, another timeout, retries.")
    await call("search_index_content", doc_id="doc-b", content="SessionManager owns the login state; one timeout.")

    with_graph = (await call("search_universal", query="SessionManager timeout")).structured_content["results"]
    without = (await call("search_universal", query="SessionManager timeout", graph=False)).structured_content[
        "results"
    ]

    assert any("knowledge graph" in hit["why"] for hit in with_graph)
    assert not any("knowledge graph" in hit["why"] for hit in without)


@BOTH
async def test_search_universal_filters_by_document_type_inside_the_search(call, store):
    for i in range(40):
        await index(call, f"runbook-{i}", f"Rotate the signing key: runbook step {i} to rotate the signing key.")
    store.memories.remember(type="decision", title="Key rotation", body="We rotate the signing key every 90 days.")

    plain = (await call("search_universal", query="rotate the signing key", limit=5)).structured_content
    only = (
        await call("search_universal", query="rotate the signing key", limit=5, doc_types=["Memory"])
    ).structured_content

    assert all(hit["doc_type"] != "memory" for hit in plain["results"])
    assert [hit["doc_type"] for hit in only["results"]] == ["memory"]


@BOTH
async def test_a_secret_searched_for_is_never_echoed_back(call):
    token = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    await index(call, "auth", "We chose JWT access tokens with refresh token rotation.", "Auth decision")

    found = await call("search_universal", query=f"refresh token rotation {token}")
    nothing = await call("search_universal", query=f"zzqx {token}")
    grep = await call("search_dokoros", query=f"zzqx {token}")

    for outcome in (found, nothing, grep):
        assert token not in outcome.content[0].text
        assert token not in str(outcome.structured_content)
    assert "[REDACTED:github-token]" in found.content[0].text
    assert found.structured_content["query"] == "refresh token rotation [REDACTED:github-token]"
