"""Fixtures of the store's unit tests: a frozen clock, stores in ``tmp_path`` and a fake Ollama on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store

# A Wednesday evening in UTC.
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "dokoro"


@pytest.fixture
def store(root: Path, clock: FrozenClock) -> Iterator[Store]:
    """A store on the embedded SQLite default."""
    with Store.open(root, clock=clock) as opened:
        yield opened


@pytest.fixture
def any_store(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    """A store on each backend in turn: SQLite, then a fresh PostgreSQL database."""
    with Store.open(root, database_url=database_url, clock=clock) as opened:
        yield opened


class FakeOllama:
    """A real HTTP server on 127.0.0.1 that answers like Ollama, counts the calls and keeps the chat requests.

    ``chat_content`` is the assistant's reply (default: an echo of the last message as JSON);
    ``delay_s`` delays the POST answers, ``tags_delay_s`` the health check's.
    """

    def __init__(self, models: tuple[str, ...] = ("llama3.2:latest", "nomic-embed-text:latest")) -> None:
        self.models = models
        self.calls: list[str] = []
        self.chats: list[dict[str, object]] = []
        self.chat_content: str | None = None
        self.delay_s = 0.0
        self.tags_delay_s = 0.0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.calls.append(self.path)
                time.sleep(fake.tags_delay_s)
                self._send({"models": [{"name": m, "model": m} for m in fake.models]})

            def do_POST(self) -> None:
                fake.calls.append(self.path)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(fake.delay_s)
                if self.path == "/api/embed":
                    self._send({"model": body["model"], "embeddings": [[1.0, float(len(t))] for t in body["input"]]})
                elif self.path == "/api/chat":
                    fake.chats.append(body)
                    content = fake.chat_content
                    if content is None:
                        content = json.dumps({"echo": body["messages"][-1]["content"]})
                    reply = {"role": "assistant", "content": content}
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
                    pass  # the client gave up (timeout tests)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def count(self, path: str) -> int:
        return sum(1 for p in self.calls if p == path)


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    server = FakeOllama()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
