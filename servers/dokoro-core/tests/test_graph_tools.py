"""dokoro_entity_graph and dokoro_entity_extract_deep through an MCP client, against a fake Ollama
served over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from dokoro_server import DokoroSettings

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)]

GOOD = {
    "entities": [
        {"name": "SessionManager", "type": "component", "description": "owns login sessions"},
        {"name": "token rotation", "type": "concept", "description": "rotating refresh tokens"},
    ],
    "relations": [{"source": "SessionManager", "target": "token rotation", "type": "implements"}],
}


class FakeOllama:
    """What the fake server answers: the models it lists and the chat content it returns."""

    def __init__(self) -> None:
        self.models = ["llama3.2:latest"]
        self.content = json.dumps(GOOD)
        self.chats: list[dict[str, Any]] = []
        self.url = ""


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    fake = FakeOllama()

    class Handler(BaseHTTPRequestHandler):
        def _json(self, payload: object) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._json({"models": [{"name": name, "model": name} for name in fake.models]})  # as Ollama lists them

        def do_POST(self) -> None:
            fake.chats.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self._json({"message": {"role": "assistant", "content": fake.content}})

        def log_message(self, *_args: object) -> None:  # keep test output quiet
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def ollama_url(ollama: FakeOllama) -> str:
    return ollama.url


@pytest.fixture
def settings(root: Path, store_url: str | None, ollama_url: str) -> DokoroSettings:
    """The plugin's settings, with Ollama pointing at the fake server and no embedder (the graph
    needs none, and full text keeps the tests quick)."""
    return DokoroSettings(path=root, database_url=store_url, ollama_url=ollama_url, embedder="none")


async def _entity_id(call, name: str) -> int:
    outcome = await call("dokoro_entity_graph", query=name)
    (hit,) = [e for e in outcome.structured_content["entities"] if e["name"] == name]
    return int(hit["id"])


async def _relations(call, entity_id: int, **arguments: Any) -> set[tuple[str, str, str]]:
    outcome = await call("dokoro_entity_graph", entityId=entity_id, **arguments)
    return {(r["source"], r["type"], r["target"]) for r in outcome.structured_content["relations"]}


async def test_the_graph_remembers_a_replaced_dependency_across_documents_and_time(call, ollama, clock):
    """The end-to-end scenario: an old fact stays visible as of its time, the new one now."""
    ollama.content = "I cannot answer in JSON, sorry."  # the regex-only path persists the same way
    before = clock.now()
    first = await call(
        "dokoro_entity_extract_deep", docId="2026-06-10-auth", text="auth/session.ts uses jwt-stateless-tokens."
    )
    assert first.structured_content["source"] == "regex-only"
    clock.advance(timedelta(days=3))
    await call(
        "dokoro_entity_extract_deep",
        docId="2026-06-13-auth",
        text="In auth/session.ts, jwt-stateless-tokens were replaced by session-cookies.",
    )

    session_ts = await _entity_id(call, "auth/session.ts")
    old = ("auth/session.ts", "depends_on", "jwt-stateless-tokens")
    new = ("jwt-stateless-tokens", "superseded_by", "session-cookies")
    as_of_before = (before + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert await _relations(call, session_ts, as_of=as_of_before) == {old}
    assert await _relations(call, session_ts) == {old, new}

    now_view = await call("dokoro_entity_graph", entityId=session_ts)
    text = now_view.content[0].text
    assert "jwt-stateless-tokens --[superseded_by]--> session-cookies (weight: 0.7)" in text
    assert "**2026-06-10-auth** (depends_on, confidence: 0.70)" in text
    assert "**2026-06-13-auth** (mentions, confidence: 0.70)" in text
    stats = (await call("dokoro_entity_graph")).structured_content["stats"]
    assert (stats["entities"], stats["relations"]) == (3, 2)  # nothing deleted


async def test_a_replacement_closes_the_old_fact_which_stays_visible_in_its_window(call, ollama, clock):
    ollama.content = "{not json"
    await call("dokoro_entity_extract_deep", docId="d-1", text="LegacyAuth was replaced by TokenAuth.")
    inside = clock.now() + timedelta(hours=1)
    clock.advance(timedelta(days=1))
    outcome = await call("dokoro_entity_extract_deep", docId="d-2", text="LegacyAuth was replaced by CookieAuth.")
    assert outcome.structured_content["relations_closed"] == 1

    legacy = await _entity_id(call, "LegacyAuth")
    assert await _relations(call, legacy) == {("LegacyAuth", "superseded_by", "CookieAuth")}
    assert await _relations(call, legacy, as_of=inside.strftime("%Y-%m-%dT%H:%M:%SZ")) == {
        ("LegacyAuth", "superseded_by", "TokenAuth")
    }
    history = await call("dokoro_entity_graph", entityId=legacy, as_of=inside.strftime("%Y-%m-%dT%H:%M:%SZ"))
    (closed,) = history.structured_content["relations"]
    assert closed["valid_to"] == "2026-06-11T22:23:15Z"
    assert closed["closed_at"] == "2026-06-11T22:23:15Z"


async def test_deep_extraction_with_good_json_is_hybrid_and_reads_like_the_reference(call, ollama):
    outcome = await call(
        "dokoro_entity_extract_deep", docId="no-such-doc", text="SessionManager uses redis, written by @alice."
    )

    text = outcome.content[0].text
    assert text.startswith("## Deep Entity Extraction: no-such-doc\nSource: hybrid\nModel: llama3.2\n")
    assert "**SessionManager** [component] (90%) - SessionManager uses redis, written by @alice." in text
    assert "**token rotation** [concept] (90%) - rotating refresh tokens" in text
    assert "SessionManager --[implements]--> token rotation (90%)" in text
    assert "SessionManager --[depends_on]--> redis (70%)" in text
    assert text.endswith("_persisted to knowledge graph_")
    data = outcome.structured_content
    assert data["source"] == "hybrid"
    assert {e["canonical_name"] for e in data["entities"]} == {"sessionmanager", "redis", "alice", "token rotation"}
    assert all(isinstance(e["id"], int) for e in data["entities"])
    (chat,) = ollama.chats
    assert chat["format"] == "json"


async def test_deep_extraction_without_the_model_names_the_pull_command(call, fail, ollama):
    ollama.models = ["nomic-embed-text:latest"]

    message = await fail("dokoro_entity_extract_deep", docId="d-1", text="SessionManager uses redis.")
    assert "`ollama pull llama3.2`" in message
    assert ollama.chats == []
    stats = (await call("dokoro_entity_graph")).structured_content["stats"]
    assert stats["entities"] == 0


async def test_deep_extraction_of_a_document_without_text_or_row_fails_clearly(fail):
    message = await fail("dokoro_entity_extract_deep", docId="missing")
    assert "No document with id 'missing'" in message
    assert "pass the text" in message


async def test_search_mode_lists_entities_most_documented_first(call, ollama):
    ollama.content = "no"
    await call("dokoro_entity_extract_deep", docId="a", text="SessionStore uses redis. See #caching.")
    await call("dokoro_entity_extract_deep", docId="b", text="SessionStore is quick.")

    outcome = await call("dokoro_entity_graph", query="session", type="component")
    text = outcome.content[0].text
    assert text.splitlines()[:5] == [
        "## Entity Search Results",
        "Graph stats: 3 entities, 1 relations",
        'Query: "session"',
        "Type: component",
        "Results: 1 found",
    ]
    assert "**SessionStore** [component] (ID: " in text
    assert ", docs: 2)" in text
    assert outcome.structured_content["entities"][0]["doc_count"] == 2


async def test_traversal_of_an_unknown_entity_and_bad_arguments_fail_clearly(call, fail):
    assert "No entity with ID 999" in await fail("dokoro_entity_graph", entityId=999)
    assert "depth" in await fail("dokoro_entity_graph", entityId=1, depth=6)
    assert "ISO-8601" in await fail("dokoro_entity_graph", entityId=await _seed(call), as_of="yesterday")
    assert "type" in await fail("dokoro_entity_graph", type="planet")


async def _seed(call) -> int:
    await call("dokoro_entity_extract_deep", docId="a", text="SessionStore uses redis.")
    return await _entity_id(call, "SessionStore")


async def test_an_entity_without_relations_or_documents_says_so(call, store):
    entity = store.graph.upsert_entity("concept", "lonely")
    outcome = await call("dokoro_entity_graph", entityId=entity.id)
    text = outcome.content[0].text
    assert text.startswith(f"## Entity: lonely\nType: concept\nID: {entity.id}\nCanonical: lonely\nAs of: ")
    assert "### Relations (depth 2, 0 found)\nNo relations found." in text
    assert "### Linked Documents (0)\nNo linked documents found." in text


@pytest.mark.parametrize("ollama_url", ["http://127.0.0.1:9"])
async def test_deep_extraction_when_ollama_is_not_running_says_how_to_start_it(fail):
    message = await fail("dokoro_entity_extract_deep", docId="d-1", text="SessionManager uses redis.")
    assert "Ollama at http://127.0.0.1:9 is not reachable" in message
    assert "ollama serve" in message
    assert "`ollama pull llama3.2`" in message


async def test_workspace_dumps_fill_the_graph_through_the_indexing_hook(call, clock):
    """The same scenario with no model at all: each dump is indexed, and indexing extracts entities."""
    await call("dokoro_workspace_claim", task="Fix the login race")
    await call("dokoro_session_log", entry="auth/session.ts uses jwt-stateless-tokens.")
    await call("dokoro_workspace_dump", reason="end of day", keepActive=False)
    before = clock.now()
    clock.advance(timedelta(days=3))
    await call("dokoro_workspace_claim", task="Move sessions to cookies")
    await call("dokoro_session_log", entry="In auth/session.ts, jwt-stateless-tokens were replaced by session-cookies.")
    await call("dokoro_workspace_dump", reason="end of day", keepActive=False)

    session_ts = await _entity_id(call, "auth/session.ts")
    old = ("auth/session.ts", "depends_on", "jwt-stateless-tokens")
    new = ("jwt-stateless-tokens", "superseded_by", "session-cookies")
    as_of_before = (before + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert await _relations(call, session_ts, as_of=as_of_before) == {old}
    assert await _relations(call, session_ts) == {old, new}
    documents = (await call("dokoro_entity_graph", entityId=session_ts)).structured_content["documents"]
    assert len({d["doc_id"] for d in documents}) == 2  # one link per dump
