"""The embedder protocol and the handle that picks one, lazily, from the configuration.

An embedder turns texts into unit-length float32 vectors. Every vector the store keeps is
stamped with the ``id`` of the embedder that made it, so vectors of two embedders are never
compared. Implementations:

- ``onnx``: all-MiniLM-L6-v2 as an int8 ONNX graph shipped inside this package, run by onnxruntime
  (offline; the default when the ``dokoro-store[onnx]`` extra is installed);
- ``static``: a model2vec model distilled from all-MiniLM-L6-v2 and shipped inside this package
  (offline, the default without that extra);
- ``ollama``: ``nomic-embed-text`` through a local Ollama server;
- ``hashing``: a dependency-free floor (feature hashing of words: matches shared words, not meaning).

Nothing here imports numpy, model2vec or httpx at module import; the first embedding does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Protocol

from dokoro_store.errors import EmbedderUnavailableError
from dokoro_store.index.arithmetic import from_bytes, normalise_rows, products, to_bytes, unit_mean
from dokoro_store.index.config import RetrievalConfig

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from dokoro_store.index.embedders.ollama_client import OllamaServers

    FloatMatrix = npt.NDArray[np.float32]

__all__ = [
    "Embedder",
    "EmbedderHandle",
    "EmbedderStatus",
    "from_bytes",
    "normalise_rows",
    "products",
    "to_bytes",
    "unit_mean",
]


class Embedder(Protocol):
    """Texts in, one unit-length float32 row per text out."""

    @property
    def id(self) -> str:
        """The stamp stored with every vector, e.g. ``static:minilm-l6-m2v256-i8-1a2b3c4d``."""
        ...

    @property
    def kind(self) -> str:
        """``onnx``, ``static``, ``ollama`` or ``hashing``."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def label(self) -> str:
        """A human description, for status and doctor."""
        ...

    def embed(self, texts: Sequence[str], *, query: bool = False) -> FloatMatrix:
        """Embed ``texts`` (``query=True`` for a search query, which some models prefix)."""
        ...


@dataclass(frozen=True)
class EmbedderStatus:
    """What the handle would embed with, found without loading a model."""

    choice: str
    kind: str  # onnx | static | ollama | hashing | none
    id: str | None
    dimension: int | None
    label: str
    available: bool
    detail: str
    model_file: str | None = None  # the weights it loads (a bundled file, or Ollama's model name)


def static_available() -> tuple[bool, str]:
    from dokoro_store.index.embedders.static import MODEL_DIR, model_files_present

    if find_spec("model2vec") is None:
        return False, "the model2vec package is not installed (pip install model2vec)"
    if not model_files_present(MODEL_DIR):
        return False, f"the bundled static model is missing from {MODEL_DIR}"
    return True, "bundled model2vec model (offline)"


def onnx_available() -> tuple[bool, str]:
    from dokoro_store.index.embedders.onnx import onnx_available as available

    return available()


def _kind_of(stamp: str | None) -> str | None:
    return stamp.split(":", 1)[0] if stamp else None


def _cannot_run(stamp: str | None, why: str, install: str) -> str:
    return (
        f"this store's vectors were made by {stamp}, which this process cannot run ({why}); search and recall "
        f"use word matching here. Fix: {install}, or move the whole store to another embedder with "
        "`dokoro reembed --embedder onnx|static`"
    )


class EmbedderHandle:
    """Resolves the configured embedder on first use and keeps it for the life of the store.

    ``stamp_lookup`` returns the embedder id the document vectors are stamped with (or None).
    ``auto`` uses it to stay with the embedder that built the index: a configured Ollama whose
    vectors are stored (rather than silently switching while Ollama is down), or the bundled
    ``onnx`` / ``static`` model the index was stamped with, when this process can run it. So several
    processes on one store (a core-only server without the onnx extra next to a unified one)
    embed alike; a process that cannot run the stamped embedder says so instead of guessing.
    """

    def __init__(
        self,
        config: RetrievalConfig,
        *,
        stamp_lookup: Callable[[], str | None] | None = None,
        http_transport: Any = None,
        ollama: OllamaServers | None = None,
    ) -> None:
        """``ollama``: the store's Ollama servers, whose health checks the Ollama embedder shares
        (without it, the embedder checks for itself)."""
        self.config = config
        self._stamp_lookup = stamp_lookup
        self._transport = http_transport
        self._servers = ollama
        self._lock = threading.Lock()
        self._resolved: Embedder | None = None
        self._done = False
        self._reason = ""
        self._ollama: Any = None

    # ------------------------------------------------------------------ pieces
    def ollama(self) -> Any:
        """The Ollama embedder of this configuration (created once; nothing is contacted yet)."""
        if self._ollama is None:
            from dokoro_store.index.config import DEFAULT_OLLAMA_URL
            from dokoro_store.index.embedders.ollama import OllamaEmbedder

            url = self.config.ollama_url or DEFAULT_OLLAMA_URL
            self._ollama = OllamaEmbedder(
                url,
                self.config.ollama_model,
                self.config.ollama_timeout_s,
                transport=self._transport,
                # A fake transport (tests) checks for itself; a real address shares the store's check.
                health=self._servers.health(url) if self._servers is not None and self._transport is None else None,
            )
        return self._ollama

    def _stamp(self) -> str | None:
        return self._stamp_lookup() if self._stamp_lookup else None

    def _auto_wants_ollama(self) -> bool:
        if self.config.ollama_url is None:
            return False
        ollama = self.ollama()
        stamp = self._stamp()
        if stamp is not None:
            return bool(stamp == ollama.id)  # a stamped store keeps its embedder (see _auto_bundled)
        return bool(ollama.healthy()[0])

    def _auto_bundled(self) -> tuple[str | None, str]:
        """``auto`` without Ollama: which embedder (``onnx``, ``static``, ``hashing``, or None), and why.

        A stamped store decides: every process embeds with the embedder that made its vectors, or,
        when it cannot run that one, with none (word matching, said on every search answer) — never
        with another, which would split the store in two. Only ``dokoro reembed`` changes a stamp.
        """
        onnx_ok, onnx_why = onnx_available()
        static_ok, static_why = static_available()
        stamp = self._stamp()
        stamped = _kind_of(stamp)
        if stamped == "onnx":
            if onnx_ok:
                return "onnx", "auto: the index is stamped with the onnx embedder"
            return None, _cannot_run(stamp, onnx_why, "install onnxruntime and tokenizers here (dokoro-store[onnx])")
        if stamped == "static":
            if static_ok:
                why = "auto: the index is stamped with the static embedder"
                if onnx_ok:
                    why += " (`dokoro reembed --embedder onnx` moves it to the stronger transformer)"
                return "static", why
            return None, _cannot_run(stamp, static_why, "install model2vec here")
        if stamped == "hashing":
            return "hashing", "auto: the index is stamped with the hashing floor"
        if stamped is not None:  # ollama, and a stamp of an embedder this dokoro does not know
            return None, _cannot_run(stamp, "this process does not reach it", "set OLLAMA_URL for this process too")
        if onnx_ok:
            return "onnx", f"auto: {onnx_why}"
        if static_ok:
            return "static", f"auto: {static_why} (the onnx embedder is unavailable: {onnx_why})"
        return None, f"fallback to hashing: {static_why}; {onnx_why}"

    def _resolve(self) -> tuple[Embedder | None, str]:
        choice = self.config.embedder
        if choice == "none":
            return None, "DOKORO_EMBEDDER=none: vectors are off (full text only, recall by recency)"
        if choice == "hashing":
            from dokoro_store.index.embedders.hashing import HashingEmbedder

            return HashingEmbedder(), ""
        if choice == "ollama" or (choice == "auto" and self._auto_wants_ollama()):
            return self.ollama(), ""
        if choice == "onnx":
            ok, why = onnx_available()
            if not ok:
                return None, f"DOKORO_EMBEDDER=onnx but {why}"
            from dokoro_store.index.embedders.onnx import OnnxEmbedder

            return OnnxEmbedder(), ""
        if choice == "static":
            ok, why = static_available()
            if not ok:
                return None, f"DOKORO_EMBEDDER=static but {why}"
            from dokoro_store.index.embedders.static import StaticEmbedder

            return StaticEmbedder(), ""
        kind, why = self._auto_bundled()
        if kind == "onnx":
            from dokoro_store.index.embedders.onnx import OnnxEmbedder

            return OnnxEmbedder(), ""
        if kind == "static":
            from dokoro_store.index.embedders.static import StaticEmbedder

            return StaticEmbedder(), ""
        if kind is None and self._stamp() is not None:
            return None, why
        from dokoro_store.index.embedders.hashing import HashingEmbedder

        return HashingEmbedder(), ""

    def get(self) -> Embedder | None:
        """The embedder to use, or None when there is none (see :attr:`reason`).

        An Ollama embedder is returned only while its server answers (one cached health check).
        """
        with self._lock:
            if not self._done:
                self._resolved, self._reason = self._resolve()
                self._done = True
            embedder = self._resolved
        if embedder is not None and embedder.kind == "ollama":
            healthy, why = embedder.healthy()  # type: ignore[attr-defined]
            if not healthy:
                self._reason = why
                return None
        return embedder

    def adopt(self, stamp: str) -> Embedder | None:
        """Under ``auto``, switch to the bundled embedder ``stamp`` names when this process can run it.

        Called when the index turns out to be stamped by another embedder than the one resolved (an
        empty store claimed by another process first). Returns the new embedder, or None when
        the choice is forced or the stamped embedder cannot run here.
        """
        if self.config.embedder != "auto":
            return None
        kind = _kind_of(stamp)
        candidate: Embedder | None = None
        if kind == "onnx" and onnx_available()[0]:
            from dokoro_store.index.embedders.onnx import OnnxEmbedder

            candidate = OnnxEmbedder()
        elif kind == "static" and static_available()[0]:
            from dokoro_store.index.embedders.static import StaticEmbedder

            candidate = StaticEmbedder()
        if candidate is None or candidate.id != stamp:
            return None
        with self._lock:
            self._resolved, self._reason, self._done = candidate, "", True
        return candidate

    @property
    def reason(self) -> str:
        """Why :meth:`get` returned None."""
        return self._reason

    def require(self) -> Embedder:
        embedder = self.get()
        if embedder is None:
            raise EmbedderUnavailableError(f"no embedder available: {self.reason}")
        return embedder

    # ------------------------------------------------------------------ status
    def status(self) -> EmbedderStatus:
        """What this handle embeds with, without loading a model (Ollama: one cached health check)."""
        choice = self.config.embedder
        if choice == "none":
            return EmbedderStatus(choice, "none", None, None, "none", False, self._resolve()[1])
        if choice == "ollama" or (choice == "auto" and self._auto_wants_ollama()):
            ollama = self.ollama()
            healthy, why = ollama.healthy()
            return EmbedderStatus(
                choice,
                "ollama",
                ollama.id,
                ollama.dimension,
                ollama.label,
                healthy,
                why or f"reachable at {ollama.url}",
                f"{ollama.model} (Ollama at {ollama.url})",
            )
        if choice in ("onnx", "static"):
            kind: str | None = choice
            ok, why = onnx_available() if choice == "onnx" else static_available()
            why = why if ok else f"DOKORO_EMBEDDER={choice} but {why}"
        elif choice == "auto":
            kind, why = self._auto_bundled()
            ok = kind is not None
        else:
            kind, ok, why = "hashing", True, "chosen by DOKORO_EMBEDDER"
        if kind == "onnx" and ok:
            from dokoro_store.index.embedders.onnx import OnnxEmbedder

            onnx = OnnxEmbedder()
            return EmbedderStatus(choice, "onnx", onnx.id, onnx.dimension, onnx.label, True, why, onnx.model_file)
        if kind == "static" and ok:
            from dokoro_store.index.embedders.static import MODEL_DIR, StaticEmbedder

            static = StaticEmbedder()
            return EmbedderStatus(
                choice, "static", static.id, static.dimension, static.label, True, why, str(MODEL_DIR)
            )
        stamped = _kind_of(self._stamp()) if choice == "auto" else None
        if kind in ("onnx", "static") or (kind is None and stamped is not None):
            unavailable = kind or stamped or "onnx"
            return EmbedderStatus(choice, unavailable, None, None, f"{unavailable} (unavailable)", False, why, None)
        from dokoro_store.index.embedders.hashing import HashingEmbedder

        floor = HashingEmbedder()
        return EmbedderStatus(choice, "hashing", floor.id, floor.dimension, floor.label, True, why, None)

    def close(self) -> None:
        if self._ollama is not None:
            self._ollama.close()
