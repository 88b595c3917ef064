"""Embedders: the bundled static model, the hashing floor, Ollama (faked), and how one is chosen."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import numpy as np
import pytest
from dokoro_store.errors import EmbedderUnavailableError
from dokoro_store.index.embedders import handle as embedders_module
from dokoro_store.index.embedders.handle import EmbedderHandle, from_bytes, to_bytes
from dokoro_store.index.embedders.hashing import HashingEmbedder
from dokoro_store.index.embedders.ollama import OllamaEmbedder, clean_text
from dokoro_store.index.embedders.onnx import OnnxEmbedder
from dokoro_store.index.embedders.static import StaticEmbedder
from dokoro_store.retrieval import RetrievalConfig


def cos(a, b) -> float:
    return float(np.dot(a, b))


def test_the_static_model_gives_paraphrases_a_clearly_higher_cosine_than_unrelated_text():
    embedder = StaticEmbedder()
    a, paraphrase, unrelated = embedder.embed(
        [
            "The login page rejects valid passwords after the session expires.",
            "Users cannot sign in with correct credentials once their session has timed out.",
            "We planted tomatoes and basil in the garden this spring.",
        ]
    )

    assert cos(a, paraphrase) > cos(a, unrelated) + 0.2


def test_the_onnx_model_separates_paraphrases_from_unrelated_text_far_better_than_the_static_one():
    texts = [
        "The login page rejects valid passwords after the session expires.",
        "Users cannot sign in with correct credentials once their session has timed out.",
        "We planted tomatoes and basil in the garden this spring.",
    ]
    a, paraphrase, unrelated = OnnxEmbedder().embed(texts)
    s_a, s_paraphrase, s_unrelated = StaticEmbedder().embed(texts)

    gap = cos(a, paraphrase) - cos(a, unrelated)
    assert gap > 0.5
    assert gap > cos(s_a, s_paraphrase) - cos(s_a, s_unrelated)


def test_the_onnx_model_is_stamped_returns_unit_rows_and_embeds_a_batch_as_one_by_one():
    embedder = OnnxEmbedder()
    texts = ["short", "a somewhat longer text about databases and their migrations", "日本語のテキスト"]
    texts += [f"{t} number {n}" for n, t in enumerate(texts)]  # six: enough to run side by side on the pool
    batch = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])

    assert embedder.id.startswith("onnx:minilm-l6-v2-int8-") and embedder.dimension == 384
    assert batch.dtype == np.float32 and batch.shape == (6, 384)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert np.allclose(batch, single, atol=1e-4)  # padding a short text to a long one changes nothing
    assert embedder.embed([]).shape == (0, 384)
    query = embedder.embed(["refresh token rotation"], query=True)
    query[0, 0] = 42.0  # a caller writing into its copy must not spoil the cached query vector
    assert embedder.embed(["refresh token rotation"], query=True)[0, 0] != 42.0


def test_the_static_model_is_stamped_and_returns_unit_float32_rows():
    embedder = StaticEmbedder()
    matrix = embedder.embed(["one text", "another text"])

    assert embedder.id.startswith("static:minilm-l6-m2v")
    assert matrix.dtype == np.float32
    assert matrix.shape == (2, embedder.dimension)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, embedder.dimension)


def test_the_static_models_cached_vectors_equal_fresh_ones_and_the_cache_stays_bounded(monkeypatch):
    from dokoro_store.index.embedders import static

    monkeypatch.setattr(static, "_CACHE_SIZE", 4)
    embedder = StaticEmbedder()
    texts = ["the deploy failed on Friday", "we moved billing to Kafka", "", "the deploy failed on Friday", "x" * 9000]
    fresh = embedder.embed(texts)
    first = embedder.embed_cached(texts)  # the repeated text and the clipped long one in one call
    again = embedder.embed_cached(list(reversed(texts)))
    assert first.shape == fresh.shape and first.dtype == np.float32
    assert np.array_equal(first, fresh)
    assert np.array_equal(again, fresh[::-1])
    assert len(static._cached) <= 4
    assert embedder.embed_cached([]).shape == (0, embedder.dimension)


def test_vectors_survive_the_database_byte_format():
    vector = StaticEmbedder().embed(["round trip"])[0]

    assert np.array_equal(from_bytes(to_bytes(vector)), vector)


def test_the_hashing_floor_matches_shared_words_and_says_what_it_is():
    embedder = HashingEmbedder()
    a, shared, other = embedder.embed(["refresh token rotation", "token rotation schedule", "garden tomatoes"])

    assert "floor" in embedder.label and "not meaning" in embedder.label
    assert cos(a, shared) > cos(a, other)
    assert np.array_equal(embedder.embed(["same"]), embedder.embed(["same"]))  # deterministic across calls


# ---------------------------------------------------------------------- Ollama, faked


class FakeOllama:
    """An httpx transport that answers like Ollama and counts the calls."""

    def __init__(self, *, models=("nomic-embed-text:latest",), dimension=8, down=False) -> None:
        self.models = list(models)
        self.dimension = dimension
        self.down = down
        self.calls: list[tuple[str, object]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.calls.append((request.url.path, body))
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path == "/api/tags":
            return httpx.Response(200, json={"models": [{"name": name, "model": name} for name in self.models]})
        if request.url.path == "/api/embed":
            inputs = body["input"]
            rows = [
                [float(len(text) % 7 + 1), *[float(i == j) for j in range(self.dimension - 1)]]
                for i, text in enumerate(inputs)
            ]
            return httpx.Response(200, json={"embeddings": rows})
        return httpx.Response(404)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def count(self, path: str) -> int:
        return sum(1 for p, _ in self.calls if p == path)


def test_ollama_embeds_in_batches_with_task_prefixes_and_cleaned_text():
    fake = FakeOllama()
    embedder = OllamaEmbedder("http://ollama.test", "nomic-embed-text", 1.0, transport=fake.transport())

    matrix = embedder.embed(["first\x00 text", "second"], query=False)
    embedder.embed(["a question"], query=True)

    assert matrix.shape == (2, 8)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)
    assert embedder.id == "ollama:nomic-embed-text"
    inputs = [body["input"] for path, body in fake.calls if path == "/api/embed"]
    assert inputs == [["search_document: first text", "search_document: second"], ["search_query: a question"]]
    assert embedder.dimension == 8


def test_an_absent_ollama_costs_one_fast_failure_not_one_per_call():
    fake = FakeOllama(down=True)
    embedder = OllamaEmbedder("http://ollama.test", "nomic-embed-text", 1.0, transport=fake.transport())

    for _ in range(5):
        with pytest.raises(EmbedderUnavailableError, match="ollama serve"):
            embedder.embed(["text"])
    ok, why = embedder.healthy()

    assert not ok and "not reachable" in why
    assert fake.count("/api/tags") == 1
    assert fake.count("/api/embed") == 0


def test_ollama_without_the_model_says_how_to_pull_it():
    embedder = OllamaEmbedder(
        "http://ollama.test", "nomic-embed-text", 1.0, transport=FakeOllama(models=["llama3.2:latest"]).transport()
    )

    ok, why = embedder.healthy()

    assert not ok
    assert "ollama pull nomic-embed-text" in why


def test_clean_text_drops_control_characters_but_keeps_lines():
    assert clean_text("  a\x00b\tc\nd\x07  ") == "ab\tc\nd"


def test_the_handle_uses_a_real_fake_ollama_server_on_loopback():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self._send({"models": [{"name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest"}]})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self._send({"embeddings": [[1.0, 0.0, float(len(t))] for t in body["input"]]})

        def _send(self, data):
            raw = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        handle = EmbedderHandle(RetrievalConfig(embedder="auto", ollama_url=url, ollama_timeout_s=2.0))
        embedder = handle.get()
        assert embedder is not None and embedder.kind == "ollama"
        assert handle.status().available
        assert embedder.embed(["hello"]).shape == (1, 3)
        handle.close()
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------- choosing


def test_auto_picks_the_bundled_onnx_model_when_ollama_is_not_configured():
    handle = EmbedderHandle(RetrievalConfig())

    status = handle.status()

    assert status.kind == "onnx" and status.available and status.model_file.endswith("model.onnx")  # type: ignore[union-attr]
    assert handle.get().kind == "onnx"  # type: ignore[union-attr]


def test_auto_picks_the_static_model_when_onnxruntime_is_missing(monkeypatch):
    monkeypatch.setattr(embedders_module, "onnx_available", lambda: (False, "onnxruntime not installed"))
    handle = EmbedderHandle(RetrievalConfig())

    status = handle.status()

    assert status.kind == "static" and status.available and "onnxruntime not installed" in status.detail
    assert handle.get().kind == "static"  # type: ignore[union-attr]


def test_auto_stays_with_the_static_model_an_existing_index_is_stamped_with():
    static_id = StaticEmbedder().id
    handle = EmbedderHandle(RetrievalConfig(), stamp_lookup=lambda: static_id)

    assert handle.get().id == static_id  # type: ignore[union-attr]
    assert "reembed --embedder onnx" in handle.status().detail


def test_a_process_without_onnxruntime_says_so_on_an_onnx_stamped_index_instead_of_mixing(monkeypatch):
    monkeypatch.setattr(embedders_module, "onnx_available", lambda: (False, "onnxruntime not installed"))
    handle = EmbedderHandle(RetrievalConfig(), stamp_lookup=lambda: OnnxEmbedder().id)

    assert handle.get() is None
    assert "onnxruntime not installed" in handle.reason and "dokoro-store[onnx]" in handle.reason
    status = handle.status()
    assert status.kind == "onnx" and not status.available


def test_auto_prefers_a_configured_and_healthy_ollama():
    handle = EmbedderHandle(RetrievalConfig(ollama_url="http://ollama.test"), http_transport=FakeOllama().transport())

    assert handle.get().kind == "ollama"  # type: ignore[union-attr]


def test_auto_falls_back_to_the_bundled_model_while_a_configured_ollama_is_down_and_holds_no_vectors():
    handle = EmbedderHandle(
        RetrievalConfig(ollama_url="http://ollama.test"),
        http_transport=FakeOllama(down=True).transport(),
        stamp_lookup=lambda: None,
    )

    assert handle.get().kind == "onnx"  # type: ignore[union-attr]


def test_auto_stays_with_a_down_ollama_whose_vectors_are_stored_rather_than_mixing_embedders():
    handle = EmbedderHandle(
        RetrievalConfig(ollama_url="http://ollama.test"),
        http_transport=FakeOllama(down=True).transport(),
        stamp_lookup=lambda: "ollama:nomic-embed-text",
    )

    assert handle.get() is None
    assert "not reachable" in handle.reason


def test_auto_falls_back_to_the_hashing_floor_without_model2vec_nor_onnxruntime(monkeypatch):
    monkeypatch.setattr(embedders_module, "static_available", lambda: (False, "model2vec is not installed"))
    monkeypatch.setattr(embedders_module, "onnx_available", lambda: (False, "onnxruntime not installed"))
    handle = EmbedderHandle(RetrievalConfig())

    assert handle.get().kind == "hashing"  # type: ignore[union-attr]
    assert handle.status().kind == "hashing"
    assert "model2vec is not installed" in handle.status().detail


def test_an_explicit_static_choice_without_model2vec_says_why_instead_of_degrading(monkeypatch):
    monkeypatch.setattr(embedders_module, "static_available", lambda: (False, "model2vec is not installed"))
    handle = EmbedderHandle(RetrievalConfig(embedder="static"))

    assert handle.get() is None
    with pytest.raises(EmbedderUnavailableError, match="model2vec is not installed"):
        handle.require()


def test_none_turns_vectors_off():
    handle = EmbedderHandle(RetrievalConfig(embedder="none"))

    assert handle.get() is None
    assert handle.status().kind == "none"
    assert "full text only" in handle.reason


def test_an_unknown_embedder_choice_is_refused():
    with pytest.raises(ValueError, match="embedder must be one of"):
        RetrievalConfig(embedder="magic")  # type: ignore[arg-type]
