"""The Ollama embedder: ``nomic-embed-text`` (or another model) through a local Ollama.

It speaks through the store's one Ollama client (:mod:`dokoro_store.index.embedders.ollama_client`, the official
``ollama`` package): an absent server costs one fast failure, not one per call (the health check
is cached; a failed call marks the server down at once), and every call has a timeout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dokoro_store.errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from dokoro_store.index.arithmetic import FloatMatrix
    from dokoro_store.index.embedders.ollama_client import ServerHealth

__all__ = ["KNOWN_DIMENSIONS", "OllamaEmbedder", "clean_text"]

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
    """Embeddings through the store's one Ollama client (:mod:`dokoro_store.index.embedders.ollama_client`)."""

    kind = "ollama"

    def __init__(
        self, url: str, model: str, timeout_s: float, *, transport: Any = None, health: ServerHealth | None = None
    ) -> None:
        """``health``: the health state shared with the store's other clients of ``url``
        (:meth:`~dokoro_store.index.embedders.ollama_client.OllamaServers.health`)."""
        from dokoro_store.index.embedders.ollama_client import OllamaClient

        self.url = url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self._client = OllamaClient(self.url, timeout_s=timeout_s, transport=transport, health=health)
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

    def healthy(self) -> tuple[bool, str]:
        """``(ok, reason)``: one ``GET /api/tags`` per TTL, whatever the number of callers."""
        ok, why = self._client.healthy(self.model)
        return ok, (f"{why} (or set DOKORO_EMBEDDER=static)" if why else why)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> FloatMatrix:
        import numpy as np

        from dokoro_store.index.arithmetic import normalise_rows
        from dokoro_store.index.embedders.ollama_client import OllamaCallError

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
                rows.extend(self._client.embed(self.model, inputs[start : start + BATCH]))
            except OllamaCallError as exc:
                raise EmbedderUnavailableError(str(exc)) from exc
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        matrix = normalise_rows(np.asarray(rows, dtype=np.float32))
        self._dimension = int(matrix.shape[1])
        return matrix

    def close(self) -> None:
        self._client.close()
