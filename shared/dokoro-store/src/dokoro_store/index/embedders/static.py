"""The bundled static embedder: a model2vec model distilled from all-MiniLM-L6-v2.

The model folder ships inside this package (``static_model/``, made once by
``scripts/distill_static_model.py``). It is loaded from that folder only — never from a model
hub — on the first embedding, and shared by every store of the process.
"""

from __future__ import annotations

import hashlib
import json
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_store.errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from dokoro_store.index.arithmetic import FloatMatrix

__all__ = ["MODEL_DIR", "StaticEmbedder", "model_files_present"]

MODEL_DIR = Path(__file__).with_name("static_model")
_REQUIRED = ("config.json", "model.safetensors", "tokenizer.json", "dokoro_provenance.json")
# model2vec truncates each text to this many tokens anyway; cutting the characters first keeps
# tokenising a huge chunk cheap.
_MAX_CHARS = 8_000

# Process-wide on purpose, unlike a store's state: the model is a read-only folder shipped in this
# package, the same for every store of the process (loaded once, ~30 MB).
_load_lock = threading.Lock()
_loaded: dict[Path, Any] = {}

# Vectors of recently embedded texts (:meth:`StaticEmbedder.embed_cached`): the re-ranker embeds the
# same candidate texts query after query. A text's vector depends on that text alone (mean of its
# tokens' vectors), so a cached one equals a fresh one. ~1.5 KB per entry at 384 dimensions.
# Process-wide on purpose: a vector is a function of the text and the bundled model alone, whichever
# store asked for it, and the cache answers nothing else.
_CACHE_SIZE = 8_192
_cache_lock = threading.Lock()
_cached: OrderedDict[tuple[Path, bytes], Any] = OrderedDict()


def model_files_present(folder: Path) -> bool:
    return all((folder / name).is_file() for name in _REQUIRED)


@cache
def _provenance(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "dokoro_provenance.json").read_text(encoding="utf-8"))
    return data


def _load(folder: Path) -> Any:
    with _load_lock:
        model = _loaded.get(folder)
        if model is not None:
            return model
        if not model_files_present(folder):
            # Checked first: model2vec would take a missing folder for a hub id and try to download it.
            raise EmbedderUnavailableError(
                f"the bundled static model is missing from {folder}; reinstall dokoro-store, "
                "or set DOKORO_EMBEDDER=hashing"
            )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # third-party import-time deprecations are not ours
                from model2vec import StaticModel
        except ImportError:
            raise EmbedderUnavailableError(
                "the static embedder needs the model2vec package: pip install model2vec "
                "(or set DOKORO_EMBEDDER=hashing)"
            ) from None
        model = StaticModel.from_pretrained(str(folder.resolve()), force_download=False)
        _loaded[folder] = model
        return model


class StaticEmbedder:
    """model2vec static embeddings: offline, fast on a CPU, shipped with the project."""

    kind = "static"

    def __init__(self, folder: Path = MODEL_DIR) -> None:
        self._folder = folder

    @property
    def id(self) -> str:
        return str(_provenance(self._folder)["id"])

    @property
    def dimension(self) -> int:
        return int(_provenance(self._folder)["dimension"])

    @property
    def label(self) -> str:
        return f"static model2vec distilled from all-MiniLM-L6-v2 ({self.dimension} dimensions, bundled, offline)"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> FloatMatrix:
        from dokoro_store.index.arithmetic import normalise_rows

        model = _load(self._folder)
        if not texts:
            import numpy as np

            return np.zeros((0, self.dimension), dtype=np.float32)
        clipped = [text[:_MAX_CHARS] for text in texts]
        return normalise_rows(model.encode(clipped, show_progress_bar=False))

    def embed_cached(self, texts: Sequence[str]) -> FloatMatrix:
        """:meth:`embed`, the vectors of texts seen lately taken from a process-wide cache."""
        import numpy as np

        keys = [(self._folder, hashlib.blake2b(text[:_MAX_CHARS].encode(), digest_size=16).digest()) for text in texts]
        with _cache_lock:
            found: list[Any] = [_cached.get(key) for key in keys]
            for key, vector in zip(keys, found, strict=True):
                if vector is not None:
                    _cached.move_to_end(key)
        missing = [i for i, vector in enumerate(found) if vector is None]
        if missing:
            fresh = self.embed([texts[i] for i in missing])
            with _cache_lock:
                for row, i in enumerate(missing):
                    found[i] = fresh[row]
                    _cached[keys[i]] = fresh[row]
                while len(_cached) > _CACHE_SIZE:
                    _cached.popitem(last=False)
        if not found:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack(found)
