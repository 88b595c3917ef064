"""The Ollama embedder: ``nomic-embed-text`` (or another model) through Ollama's HTTP API.

An absent server costs one fast failure, not one per call: the health check is cached (a
failure for :data:`FAILURE_TTL_S`, a success for :data:`SUCCESS_TTL_S`), and an embedding call
that fails marks the server unhealthy at once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dokoro_store.errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from dokoro_store.retrieval.embedders import FloatMatrix

__all__ = ["FAILURE_TTL_S", "KNOWN_DIMENSIONS", "SUCCESS_TTL_S", "OllamaEmbedder", "clean_text"]

FAILURE_TTL_S = 30.0
SUCCESS_TTL_S = 300.0
BATCH = 32
KNOWN_DIMENSIONS = {"nomic-embed-text": 768, "mxbai-embed-large": 1024, "all-minilm": 384}
# nomic-embed-text is trained with task prefixes; other models get the text as it is.
_PREFIXED = ("nomic-embed-text",)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MAX_CHARS = 8_000


def clean_text(text: str) -> str:
    """Text without NUL and control characters (tabs and newlines kept), trimmed (reference §4.5)."""
    return _CONTROL.sub("", text).strip()


class OllamaEmbedder:
    kind = "ollama"

    def __init__(self, url: str, model: str, timeout_s: float, *, transport: Any = None) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self._transport = transport
        self._client: Any = None
        self._lock = threading.Lock()
        self._health: tuple[bool, str, float] | None = None
        self._dimension: int | None = None

    @property
    def id(self) -> str:
        return f"ollama:{self.model}"

    @property
    def dimension(self) -> int:
        if self._dimension is not None:
            return self._dimension
        return KNOWN_DIMENSIONS.get(self.model.split(":")[0], 0)

    @property
    def label(self) -> str:
        dims = f"{self.dimension} dimensions" if self.dimension else "dimension known after the first call"
        return f"Ollama {self.model} at {self.url} ({dims})"

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self.timeout_s, transport=self._transport)
        return self._client

    def _unreachable(self, why: str) -> str:
        return (
            f"Ollama at {self.url} {why}. Start it (`ollama serve`) and `ollama pull {self.model}`, "
            "check OLLAMA_URL, or set DOKORO_EMBEDDER=static"
        )

    def healthy(self) -> tuple[bool, str]:
        """``(ok, reason)``: one ``GET /api/tags`` per TTL, whatever the number of callers."""
        with self._lock:
            now = time.monotonic()
            if self._health is not None and now < self._health[2]:
                return self._health[0], self._health[1]
            ok, why = self._check()
            self._health = (ok, why, now + (SUCCESS_TTL_S if ok else FAILURE_TTL_S))
            return ok, why

    def _check(self) -> tuple[bool, str]:
        import httpx

        try:
            response = self._http().get(f"{self.url}/api/tags")
            response.raise_for_status()
            models = [str(m.get("name", "")) for m in response.json().get("models", [])]
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            return False, self._unreachable(f"is not reachable ({type(exc).__name__}: {exc})")
        if not any(name == self.model or name.startswith(f"{self.model}:") for name in models):
            return False, self._unreachable(f"does not have the model {self.model}")
        return True, ""

    def _mark_down(self, why: str) -> None:
        with self._lock:
            self._health = (False, why, time.monotonic() + FAILURE_TTL_S)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> FloatMatrix:
        import httpx
        import numpy as np

        from dokoro_store.retrieval.embedders import normalise_rows

        ok, why = self.healthy()
        if not ok:
            raise EmbedderUnavailableError(why)
        prefix = ""
        if self.model.split(":")[0] in _PREFIXED:
            prefix = "search_query: " if query else "search_document: "
        inputs = [prefix + (clean_text(text)[:_MAX_CHARS] or ".") for text in texts]
        rows: list[list[float]] = []
        for start in range(0, len(inputs), BATCH):
            try:
                response = self._http().post(
                    f"{self.url}/api/embed", json={"model": self.model, "input": inputs[start : start + BATCH]}
                )
                response.raise_for_status()
                batch = response.json()["embeddings"]
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                why = self._unreachable(f"failed to embed ({type(exc).__name__}: {exc})")
                self._mark_down(why)
                raise EmbedderUnavailableError(why) from exc
            rows.extend(batch)
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        matrix = normalise_rows(np.asarray(rows, dtype=np.float32))
        self._dimension = int(matrix.shape[1])
        return matrix

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
