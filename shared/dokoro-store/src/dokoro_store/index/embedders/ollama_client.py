"""The one Ollama client of the store: embeddings and chat through the official ``ollama`` package.

Every caller of a local Ollama (the embedder, deep extraction) goes through :class:`OllamaClient`, so
they agree on three things:

- *which model is there*: :func:`model_matches` — the exact name, or the name with a tag
  (``llama3.2`` matches ``llama3.2:latest`` and ``llama3.2:3b``, never ``llama3.2-vision``);
- *whether the server is up*: one cached health check (``GET /api/tags``) per server address and
  store (:class:`OllamaServers`, which the store's retrieval engine owns), shared by every client of
  that address (embedder and chat alike) — a failure is remembered for :data:`FAILURE_TTL_S`, a
  success for :data:`SUCCESS_TTL_S` — and a failed call marks the server down at once, so an absent
  Ollama costs one quick failure, not one per call (two stores of one process each ask for themselves);
- *how long to wait*: every call has a timeout (the health check its own, shorter one).

The ``ollama`` package is an optional extra (``dokoro-store[ollama]``), imported on the first call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dokoro_store.errors import DokoroError

__all__ = [
    "FAILURE_TTL_S",
    "SUCCESS_TTL_S",
    "OllamaCallError",
    "OllamaClient",
    "OllamaServers",
    "ServerHealth",
    "model_matches",
]

FAILURE_TTL_S = 30.0
SUCCESS_TTL_S = 300.0
HEALTH_TIMEOUT_S = 2.0


class OllamaCallError(DokoroError):
    """Ollama could not be reached, lacks the model, or failed the call (the message says which).

    ``timed_out`` says the server did not answer within the call's timeout.
    """

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def model_matches(available: str, wanted: str) -> bool:
    """Whether the installed model ``available`` is the model ``wanted`` (exact, or ``wanted:<tag>``)."""
    if available == wanted:
        return True
    if ":" in wanted:
        return wanted.endswith(":latest") and available == wanted.removesuffix(":latest")
    return available.startswith(f"{wanted}:")


@dataclass
class ServerHealth:
    """What the last health check of one server found: ``(reachable, why not, models, valid until)``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    state: tuple[bool, str, list[str], float] | None = None


class OllamaClient:
    """A local Ollama server at ``url``. ``transport`` replaces the network (tests). ``health``: the
    health state it shares with the other clients of its address (:class:`OllamaServers`); without
    it, the client checks for itself."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
        transport: Any = None,
        health: ServerHealth | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.health_timeout_s = min(health_timeout_s, timeout_s)
        self._transport = transport
        self._clients: dict[float, Any] = {}
        self._lock = threading.Lock()
        self._health = health if health is not None else ServerHealth()

    # ------------------------------------------------------------------ plumbing
    def _client(self, timeout: float) -> Any:
        with self._lock:
            client = self._clients.get(timeout)
            if client is None:
                try:
                    import ollama
                except ImportError:
                    raise OllamaCallError(
                        "the ollama package is not installed: pip install 'dokoro-store[ollama]'"
                    ) from None
                extra = {"transport": self._transport} if self._transport is not None else {}
                client = ollama.Client(host=self.url, timeout=timeout, **extra)
                self._clients[timeout] = client
            return client

    def hint(self, model: str) -> str:
        return f"Start it (`ollama serve`) and `ollama pull {model}`, or check OLLAMA_URL"

    def _failure(self, exc: BaseException, timeout_s: float) -> str:
        import httpx

        if isinstance(exc, httpx.TimeoutException):
            return f"Ollama at {self.url} did not answer within {timeout_s:g}s"
        return f"Ollama at {self.url} is not reachable ({type(exc).__name__}: {exc})"

    @staticmethod
    def _timed_out(exc: BaseException) -> bool:
        import httpx

        return isinstance(exc, httpx.TimeoutException)

    def _errors(self) -> tuple[type[BaseException], ...]:
        import httpx
        import ollama

        return (ollama.ResponseError, ConnectionError, httpx.HTTPError, ValueError, KeyError, TypeError)

    # ------------------------------------------------------------------ health
    def models(self) -> tuple[bool, str, list[str]]:
        """``(reachable, why not, installed model names)`` — one ``/api/tags`` per TTL, cached."""
        with self._health.lock:
            cached = self._health.state
        if cached is not None and time.monotonic() < cached[3]:
            return cached[0], cached[1], cached[2]
        try:
            listed = self._client(self.health_timeout_s).list()
            names = [str(m.model) for m in listed.models if m.model]
            found: tuple[bool, str, list[str]] = (True, "", names)
        except OllamaCallError as exc:
            found = (False, str(exc), [])
        except self._errors() as exc:
            found = (False, self._failure(exc, self.health_timeout_s), [])
        ttl = SUCCESS_TTL_S if found[0] else FAILURE_TTL_S
        with self._health.lock:
            self._health.state = (*found, time.monotonic() + ttl)
        return found

    def healthy(self, model: str) -> tuple[bool, str]:
        """``(ok, why not)``: the server answers and has ``model`` (cached, see :meth:`models`)."""
        reachable, why, names = self.models()
        if not reachable:
            return False, f"{why}. {self.hint(model)}"
        if not any(model_matches(name, model) for name in names):
            return False, f"Ollama at {self.url} does not have the model {model}. {self.hint(model)}"
        return True, ""

    def mark_down(self, why: str) -> None:
        with self._health.lock:
            self._health.state = (False, why, [], time.monotonic() + FAILURE_TTL_S)

    # ------------------------------------------------------------------ calls
    def embed(self, model: str, inputs: Sequence[str]) -> list[list[float]]:
        """One embedding per input (raises :class:`OllamaCallError`, and marks the server down, on failure)."""
        client = self._client(self.timeout_s)
        try:
            response = client.embed(model=model, input=list(inputs))
            return [list(map(float, row)) for row in response.embeddings]
        except self._errors() as exc:
            why = f"{self._failure(exc, self.timeout_s)} while embedding with {model}. {self.hint(model)}"
            self.mark_down(why)
            raise OllamaCallError(why, timed_out=self._timed_out(exc)) from exc

    def chat(self, model: str, messages: Sequence[dict[str, str]], *, json_format: bool = False) -> str:
        """The assistant's reply to ``messages`` (``json_format``: ask for JSON)."""
        client = self._client(self.timeout_s)
        try:
            response = client.chat(
                model=model, messages=list(messages), format="json" if json_format else None, stream=False
            )
            return str(response.message.content or "")
        except self._errors() as exc:
            why = f"{self._failure(exc, self.timeout_s)} while chatting with {model}. {self.hint(model)}"
            self.mark_down(why)
            raise OllamaCallError(why, timed_out=self._timed_out(exc)) from exc

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client._client.close()


class OllamaServers:
    """The Ollama servers one store talks to: one health check per address, shared by every client
    of that address, and one client per address and timeouts for callers made per request (a tool
    call's chat model), so they reuse its connections and cached health instead of asking again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._healths: dict[str, ServerHealth] = {}
        self._clients: dict[tuple[str, float, float], OllamaClient] = {}

    def health(self, url: str) -> ServerHealth:
        """The health state of the server at ``url`` (made on first use)."""
        with self._lock:
            return self._healths.setdefault(url.rstrip("/"), ServerHealth())

    def client(self, url: str, *, timeout_s: float, health_timeout_s: float = HEALTH_TIMEOUT_S) -> OllamaClient:
        """The client of ``url`` with these timeouts (made on first use)."""
        key = (url.rstrip("/"), timeout_s, health_timeout_s)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                health = self._healths.setdefault(key[0], ServerHealth())
                client = self._clients[key] = OllamaClient(
                    url, timeout_s=timeout_s, health_timeout_s=health_timeout_s, health=health
                )
            return client

    def forget_health(self) -> None:
        """Forget what the health checks found: every client asks its server again."""
        with self._lock:
            for health in self._healths.values():
                with health.lock:
                    health.state = None

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
