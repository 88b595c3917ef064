"""The one Ollama client of the store: embeddings and chat through the official ``ollama`` package.

Every caller of a local Ollama (the embedder, deep extraction) goes through :class:`OllamaClient`, so
they agree on three things:

- *which model is there*: :func:`model_matches` — the exact name, or the name with a tag
  (``llama3.2`` matches ``llama3.2:latest`` and ``llama3.2:3b``, never ``llama3.2-vision``);
- *whether the server is up*: one cached health check (``GET /api/tags``) per server address in the
  process, shared by every client of that address (embedder and chat alike) — a failure is
  remembered for :data:`FAILURE_TTL_S`, a success for :data:`SUCCESS_TTL_S` — and a failed call
  marks the server down at once, so an absent Ollama costs one quick failure, not one per call;
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
    "forget_health",
    "model_matches",
    "shared_client",
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
class _Health:
    """What the last health check of one server found: ``(reachable, why not, models, valid until)``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    state: tuple[bool, str, list[str], float] | None = None


_healths_lock = threading.Lock()
_healths: dict[str, _Health] = {}


def _health_of(url: str) -> _Health:
    with _healths_lock:
        return _healths.setdefault(url, _Health())


def forget_health() -> None:
    """Forget what this process's health checks found (clients made later check again). A process
    whose address now names another server needs it: a test's fake Ollama on a port that an earlier
    test's server had, within the TTL of that one's answer."""
    with _healths_lock:
        _healths.clear()


class OllamaClient:
    """A local Ollama server at ``url``. ``transport`` replaces the network (tests)."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
        transport: Any = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.health_timeout_s = min(health_timeout_s, timeout_s)
        self._transport = transport
        self._clients: dict[float, Any] = {}
        self._lock = threading.Lock()
        # A fake transport (tests) gets a health state of its own; real addresses share one per process.
        self._health = _Health() if transport is not None else _health_of(self.url)

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


_shared_lock = threading.Lock()
_shared: dict[tuple[str, float, float], OllamaClient] = {}


def shared_client(url: str, *, timeout_s: float, health_timeout_s: float = HEALTH_TIMEOUT_S) -> OllamaClient:
    """The process's client for ``url`` with these timeouts: callers made per request (a tool call)
    share its cached health check instead of asking the server again each time."""
    key = (url.rstrip("/"), timeout_s, health_timeout_s)
    with _shared_lock:
        client = _shared.get(key)
        if client is None:
            client = _shared[key] = OllamaClient(url, timeout_s=timeout_s, health_timeout_s=health_timeout_s)
        return client
