"""The entity graph's settings: Ollama's own variable names and the functional relation types."""

from __future__ import annotations

from dokoro_server import DokoroSettings


def test_ollama_variables_keep_their_unprefixed_names(monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", "http://gpu-box:11434")
    monkeypatch.setenv("OLLAMA_INFERENCE_MODEL", "qwen2.5")
    monkeypatch.setenv("OLLAMA_TIMEOUT_MS", "750")
    monkeypatch.setenv("OLLAMA_CHAT_TIMEOUT_MS", "30000")

    settings = DokoroSettings()
    assert settings.ollama_url == "http://gpu-box:11434"
    assert settings.ollama_inference_model == "qwen2.5"
    assert (settings.ollama_timeout_ms, settings.ollama_chat_timeout_ms) == (750, 30_000)


def test_ollama_defaults(monkeypatch):
    for name in ("OLLAMA_URL", "OLLAMA_INFERENCE_MODEL", "OLLAMA_TIMEOUT_MS", "OLLAMA_CHAT_TIMEOUT_MS"):
        monkeypatch.delenv(name, raising=False)

    settings = DokoroSettings()
    assert settings.ollama_url is None
    assert settings.ollama_inference_model == "llama3.2"
    assert (settings.ollama_timeout_ms, settings.ollama_chat_timeout_ms) == (5000, 120_000)


def test_functional_relation_types_default_to_superseded_by_and_read_a_comma_list(monkeypatch):
    monkeypatch.delenv("DOKORO_FUNCTIONAL_RELATION_TYPES", raising=False)
    assert DokoroSettings().functional_relation_type_set == {"superseded_by"}

    monkeypatch.setenv("DOKORO_FUNCTIONAL_RELATION_TYPES", " superseded_by , owned_by ,")
    assert DokoroSettings().functional_relation_type_set == {"superseded_by", "owned_by"}

    monkeypatch.setenv("DOKORO_FUNCTIONAL_RELATION_TYPES", "")
    assert DokoroSettings().functional_relation_type_set == frozenset()
