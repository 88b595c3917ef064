"""How the retrieval engine is configured: passed in explicitly by the entry point (libraries read no env)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_OLLAMA_MODEL",
    "DEFAULT_OLLAMA_URL",
    "EMBEDDER_CHOICES",
    "EmbedderChoice",
    "RetrievalConfig",
    "VectorEngineChoice",
]

EmbedderChoice = Literal["auto", "onnx", "static", "ollama", "hashing", "none"]
EMBEDDER_CHOICES: tuple[EmbedderChoice, ...] = ("auto", "onnx", "static", "ollama", "hashing", "none")
VectorEngineChoice = Literal["auto", "lancedb", "exact"]

DEFAULT_OLLAMA_URL = "http://localhost:11434"
DEFAULT_OLLAMA_MODEL = "nomic-embed-text"


@dataclass(frozen=True)
class RetrievalConfig:
    """The embedder and vector engine a store uses.

    ``embedder``: ``auto`` picks Ollama when ``ollama_url`` was configured and the server answers;
    else the embedder the store's vectors are already stamped with, when this process can run it
    (so a core-only process next to a unified one embeds alike); else the bundled ONNX transformer
    (``onnx``, when the ``dokoro-store[onnx]`` extra is installed), else the bundled static model,
    else the hashing floor. The other values force one (``none`` turns vectors off: full text only,
    recall by recency).
    ``ollama_url``: ``None`` means "not configured" (``auto`` then never tries Ollama; an explicit
    ``ollama`` choice uses :data:`DEFAULT_OLLAMA_URL`).
    ``vector_engine``: ``auto`` uses LanceDB on the embedded backend when it is installed, pgvector on
    PostgreSQL when the extension exists, else an exact scan of the vectors kept in the database.
    ``embed_behind``: embed what writes index a moment after they answer (write-behind), not in them.
    """

    embedder: EmbedderChoice = "auto"
    ollama_url: str | None = None
    ollama_timeout_s: float = 5.0
    ollama_model: str = DEFAULT_OLLAMA_MODEL
    vector_engine: VectorEngineChoice = "auto"
    # Writes answer once their row and full text are committed; the vectors of written documents and
    # session summaries follow a moment later, embedded in batches on a background thread of the
    # writing process (the servers turn it on; see DocumentService.index_content).
    embed_behind: bool = False

    def __post_init__(self) -> None:
        if self.embedder not in EMBEDDER_CHOICES:
            raise ValueError(f"embedder must be one of {', '.join(EMBEDDER_CHOICES)}; got {self.embedder!r}")
        if self.ollama_timeout_s <= 0:
            raise ValueError("ollama_timeout_s must be positive")
