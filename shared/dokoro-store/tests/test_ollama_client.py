"""The one Ollama client: model matching, one cached health check, timeouts — against a fake server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from dokoro_store.ollama_client import OllamaCallError, OllamaClient, model_matches


class FakeOllama:
    """A real HTTP server on 127.0.0.1 that answers like Ollama and counts the calls."""

    def __init__(self, models: tuple[str, ...] = ("llama3.2:latest", "nomic-embed-text:latest")) -> None:
        self.models = models
        self.calls: list[str] = []
        self.delay_s = 0.0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.calls.append(self.path)
                self._send({"models": [{"name": m, "model": m} for m in fake.models]})

            def do_POST(self) -> None:
                fake.calls.append(self.path)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(fake.delay_s)
                if self.path == "/api/embed":
                    self._send({"model": body["model"], "embeddings": [[1.0, float(len(t))] for t in body["input"]]})
                elif self.path == "/api/chat":
                    reply = {"role": "assistant", "content": json.dumps({"echo": body["messages"][-1]["content"]})}
                    self._send({"model": body["model"], "message": reply, "done": True})
                else:
                    self.send_response(404)
                    self.end_headers()

            def _send(self, data: object) -> None:
                raw = json.dumps(data).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def count(self, path: str) -> int:
        return sum(1 for p in self.calls if p == path)


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    server = FakeOllama()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_a_model_matches_exactly_or_with_a_tag_never_a_longer_name():
    assert model_matches("llama3.2:latest", "llama3.2")
    assert model_matches("llama3.2:3b", "llama3.2")
    assert model_matches("llama3.2", "llama3.2:latest")
    assert model_matches("llama3.2:3b", "llama3.2:3b")
    assert not model_matches("llama3.2-vision:latest", "llama3.2")
    assert not model_matches("llama3.2:1b", "llama3.2:3b")


def test_embeddings_and_chat_go_through_the_same_client(fake):
    client = OllamaClient(fake.url, timeout_s=5.0)

    assert client.healthy("nomic-embed-text") == (True, "")
    assert client.embed("nomic-embed-text", ["ab", "abcd"]) == [[1.0, 2.0], [1.0, 4.0]]
    assert json.loads(client.chat("llama3.2", [{"role": "user", "content": "hi"}], json_format=True)) == {"echo": "hi"}
    client.close()


def test_the_health_check_is_made_once_for_every_caller_and_model(fake):
    client = OllamaClient(fake.url, timeout_s=5.0)

    for _ in range(5):
        assert client.healthy("llama3.2")[0]
        assert client.healthy("nomic-embed-text")[0]
    ok, why = client.healthy("llama3.2-vision")

    assert fake.count("/api/tags") == 1
    assert not ok and "does not have the model llama3.2-vision" in why and "ollama pull" in why


def test_an_absent_server_costs_one_quick_failure_not_one_per_call():
    client = OllamaClient("http://127.0.0.1:9", timeout_s=1.0)  # nothing listens on the discard port

    started = time.monotonic()
    results = [client.healthy("llama3.2") for _ in range(5)]

    assert all(not ok and "not reachable" in why for ok, why in results)
    assert time.monotonic() - started < 5.0


def test_a_call_that_outlives_its_timeout_fails_with_a_clear_message_and_marks_the_server_down(fake):
    client = OllamaClient(fake.url, timeout_s=0.3)
    assert client.healthy("llama3.2")[0]
    fake.delay_s = 1.0

    with pytest.raises(OllamaCallError, match="did not answer in time"):
        client.chat("llama3.2", [{"role": "user", "content": "slow"}])

    ok, why = client.healthy("llama3.2")
    assert not ok and "did not answer in time" in why
    assert fake.count("/api/tags") == 1  # marked down by the failed call, not checked again
