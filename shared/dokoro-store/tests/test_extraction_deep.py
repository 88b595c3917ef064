"""Deep extraction against a fake Ollama on 127.0.0.1 (through the store's one Ollama client): good JSON,
bad JSON, a timeout, a missing model, an unreachable server; merged with the regex result and persisted
atomically."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from dokoro_store import InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc, DocEntity, Entity
from dokoro_store.semantic.graph.extraction import OllamaChat, OllamaUnavailableError, extract_regex, merge
from dokoro_store.semantic.graph.extraction.ollama import ChatFailedError, parse_llm_output
from sqlmodel import select

TEXT = "src/auth/session.ts depends on redis. SessionManager was written by @alice."
GOOD = {
    "entities": [
        {"name": "src/auth/session.ts", "type": "file", "description": "the session module"},
        {"name": "Redis", "type": "service", "description": "cache"},
        {"name": "SessionManager", "type": "component", "description": "owns sessions"},
        {"name": "token rotation", "type": "concept", "description": "a technique"},
        {"name": "", "type": "concept"},
        {"name": "Pluto", "type": "planet"},
    ],
    "relations": [
        {"source": "SessionManager", "target": "token rotation", "type": "implements"},
        {"source": "src/auth/session.ts", "target": "redis", "type": "depends_on"},
        {"source": "SessionManager", "target": "Pluto", "type": "depends_on"},
        {"source": "SessionManager", "target": "Redis", "type": "likes"},
    ],
}


def _chat(fake, **kwargs) -> OllamaChat:
    return OllamaChat(base_url=fake.url, **kwargs)


@pytest.fixture
def fake(fake_ollama):
    """The fake Ollama on 127.0.0.1 with llama3.2 pulled, answering GOOD."""
    fake_ollama.models = ("llama3.2:latest",)
    fake_ollama.chat_content = json.dumps(GOOD)
    return fake_ollama


def _count(store, model):
    with store.db.read() as session:
        return len(list(session.exec(select(model))))


def test_good_json_is_merged_with_the_regex_result_and_persisted(any_store, fake):
    deep = any_store.graph.extract_deep("doc-1", TEXT, _chat(fake))

    extraction = deep.extraction
    assert extraction.source == "hybrid"
    assert extraction.model == "llama3.2"
    by_key = {e.key: e for e in extraction.entities}
    file = by_key[("file", "src/auth/session.ts")]
    assert file.confidence == 0.9  # the model's confidence ...
    assert file.start == 0  # ... keeping the regex span
    assert file.description == "the session module"
    assert by_key[("person", "alice")].confidence == 0.7  # regex only: re-scored
    assert by_key[("concept", "token rotation")].confidence == 0.9  # model only
    assert ("concept", "") not in by_key
    relations = {(r.source[1], r.type, r.target[1]): r.confidence for r in extraction.relations if r.type != "mentions"}
    assert relations == {
        ("src/auth/session.ts", "depends_on", "redis"): 0.9,  # both: the model's
        ("sessionmanager", "authored_by", "alice"): 0.7,  # regex only
        ("sessionmanager", "implements", "token rotation"): 0.9,  # model only
    }
    session_manager = any_store.graph.find_entity("component", "SessionManager")
    walk = any_store.graph.traverse(session_manager.id, depth=1)
    assert {(r.type, r.target) for r in walk.relations} >= {("implements", "token rotation"), ("authored_by", "@alice")}
    assert deep.persisted.relations_created == 3
    (request,) = fake.chats
    assert request["model"] == "llama3.2"
    assert request["format"] == "json"
    assert request["stream"] is False
    assert request["messages"][1]["content"].endswith(TEXT)


def test_bad_json_falls_back_to_the_regex_result(any_store, fake):
    fake.chat_content = "Sure! Here are the entities: ..."
    deep = any_store.graph.extract_deep("doc-1", TEXT, _chat(fake))

    extraction = deep.extraction
    assert extraction.source == "regex-only"
    assert "not JSON" in (extraction.warning or "")
    assert {e.confidence for e in extraction.entities} == {0.7}
    assert {r.confidence for r in extraction.relations} == {0.7}
    assert {e.canonical for e in extraction.entities} == {e.canonical for e in extract_regex(TEXT).entities}
    assert deep.persisted.relations_created == 2


def test_json_of_the_wrong_shape_falls_back_to_the_regex_result(any_store, fake):
    fake.chat_content = '["a list"]'
    deep = any_store.graph.extract_deep("doc-1", TEXT, _chat(fake))
    assert deep.extraction.source == "regex-only"


def test_a_chat_timeout_falls_back_to_the_regex_result_and_says_so(any_store, fake):
    fake.delay_s = 2.0
    deep = any_store.graph.extract_deep("doc-1", TEXT, _chat(fake, chat_timeout_s=0.4))

    assert deep.extraction.source == "regex-only"
    assert deep.extraction.warning == "llama3.2 did not answer within 0.4s (raise OLLAMA_CHAT_TIMEOUT_MS)"
    assert _count(any_store, Entity) == len(extract_regex(TEXT).entities)


def test_a_missing_model_is_a_clear_error_naming_the_pull_command_and_writes_nothing(any_store, fake):
    fake.models = ("nomic-embed-text:latest",)
    with pytest.raises(OllamaUnavailableError) as raised:
        any_store.graph.extract_deep("doc-1", TEXT, _chat(fake))

    message = str(raised.value)
    assert "`ollama pull llama3.2`" in message
    assert "nomic-embed-text:latest" in message
    assert fake.chats == []
    assert _count(any_store, Entity) == 0
    assert _count(any_store, DocEntity) == 0


def test_an_unreachable_ollama_is_a_clear_error(any_store):
    chat = OllamaChat(base_url="http://127.0.0.1:9", health_timeout_s=1.0)  # nothing listens on the discard port
    with pytest.raises(
        OllamaUnavailableError, match=r"Ollama at http://127.0.0.1:9 is not reachable.*ollama pull llama3.2"
    ):
        any_store.graph.extract_deep("doc-1", TEXT, chat)


def test_a_health_check_timeout_is_a_clear_error(any_store, fake):
    fake.tags_delay_s = 2.0
    with pytest.raises(OllamaUnavailableError, match=r"did not answer within 0\.3s"):
        any_store.graph.extract_deep("doc-1", TEXT, _chat(fake, health_timeout_s=0.3))


def test_the_configured_model_is_the_one_checked_and_asked(any_store, fake):
    fake.models = ("qwen2.5:7b",)
    deep = any_store.graph.extract_deep("doc-1", TEXT, _chat(fake, model="qwen2.5"))
    assert deep.extraction.model == "qwen2.5"
    assert fake.chats[0]["model"] == "qwen2.5"


def test_a_longer_model_name_is_not_the_model(any_store, fake):
    fake.models = ("llama3.2-vision:latest",)  # the old substring match took this for llama3.2
    with pytest.raises(OllamaUnavailableError, match=r"does not have the model 'llama3\.2'"):
        any_store.graph.extract_deep("doc-1", TEXT, _chat(fake))
    assert fake.chats == []


def test_the_health_check_is_shared_by_every_extraction_of_the_process(any_store, fake):
    for n in range(3):  # the tool makes a new OllamaChat for every call
        any_store.graph.extract_deep(f"doc-{n}", TEXT, _chat(fake))
    assert fake.count("/api/tags") == 1
    assert fake.count("/api/chat") == 3


def test_without_text_the_stored_document_is_extracted(any_store, fake):
    now = datetime(2026, 6, 10, tzinfo=UTC)
    with any_store.db.write() as session:
        session.add(Doc(id="doc-7", filepath="notes/doc-7.md", title="t", content=TEXT, created_at=now, updated_at=now))
        session.add(Doc(id="empty", filepath="notes/empty.md", title="t", content="  ", created_at=now, updated_at=now))

    assert any_store.graph.extract_deep("doc-7", None, _chat(fake)).extraction.source == "hybrid"
    with pytest.raises(NotFoundError, match="pass the text"):
        any_store.graph.extract_deep("nope", None, _chat(fake))
    with pytest.raises(InvalidArgumentError, match="no content"):
        any_store.graph.extract_deep("empty", None, _chat(fake))
    with pytest.raises(InvalidArgumentError, match="text is empty"):
        any_store.graph.extract_deep("doc-7", "  ", _chat(fake))


def test_relations_of_the_model_resolve_names_case_insensitively_and_drop_the_rest():
    parsed = parse_llm_output(json.dumps(GOOD), model="m")
    assert {(r.source[1], r.type, r.target[1]) for r in parsed.relations} == {
        ("sessionmanager", "implements", "token rotation"),
        ("src/auth/session.ts", "depends_on", "redis"),
    }
    assert {r.evidence for r in parsed.relations} >= {"LLM: SessionManager implements token rotation"}
    with pytest.raises(ChatFailedError):
        parse_llm_output('{"entities": "none"}')


def test_merge_gives_every_entity_a_link_to_the_document():
    merged = merge(extract_regex(TEXT), parse_llm_output(json.dumps(GOOD), model="m"))
    mentioned = {r.source for r in merged.relations if r.type == "mentions"}
    assert mentioned == {e.key for e in merged.entities}
