"""Write rate over real stdio on a store that already holds 10k items: one agent, sequential calls.

Fills a fresh store in process (``remember_many``: 10k memories, their embeddings from the cache
``bench/scale.py`` keeps; and 10k documents through ``index_docs``; without the entity-graph
listener, as ``bench/scale.py``'s fill), then spawns the unified
``dokoro`` server on it and times, one call at a time as an agent makes them:

- ``dokoro_remember`` (through the conflict gate): new memories written like the fill's;
- ``search_index_content``: new documents of a few sentences each.

Printed per tool: writes per second (from the mean), p50 and p95 latency, and the server's CPU
per call (from /proc; it includes the work the server does behind the writes: the LanceDB copy
and the entity-graph extraction, waited for after the last call). The SDK's floor for one call
is in ``bench/mcp_calls.py``.

    uv run python bench/mcp_writes.py [--items 10000] [--writes 300] [--embedder auto] [--store-cache DIR]
        [--tool search_index_content]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dokoro_store.index.vectors.lance.engine import MIRROR_DELAY
from mcp_calls import _child, _cpu_ms, _env
from scale import CACHE, _CachedEmbedder, _fill


def _prepare(store_dir: Path, items: int, embedder: str) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig
    from dokoro_store.semantic.documents.service import NewDocument
    from dokoro_store.semantic.memories.service import MemoryDraft

    rng = random.Random(items)
    fill = _fill(items - 50, rng)  # the texts bench/scale.py embeds for a store of this size
    with Store.open(store_dir, retrieval=RetrievalConfig(embedder=embedder)) as store:
        handle = store.embedder
        inner = handle.get()
        CACHE.mkdir(parents=True, exist_ok=True)
        cached = _CachedEmbedder(inner, CACHE / f"{inner.id.replace(':', '_')}-{items}.npy")
        handle._resolved = cached  # the bench's cache in front of the real model (fill only)
        store.docs._listeners.clear()  # the fill skips entity extraction (as bench/scale.py does)
        store.memories.remember_many([MemoryDraft(type=k, title=t, body=b, entities=e) for k, t, b, e in fill])
        store.docs.save_many(
            [
                NewDocument(id=f"note-{i}", content=f"{b}\n\n{fill[-i - 1][2]}", title=t)
                for i, (_k, t, b, _e) in enumerate(fill)
            ]
        )
        store.docs.index_docs()
        cached.save()
        # A store of 10k memories has their files: render them now, not over the timed calls
        # (500 per call, each written and fsync-ed, was most of the first calls' time).
        while store.memories.sync_files().rendered:
            pass


def _settle(store_dir: Path, embedder: str) -> None:
    """A copied store's memory files in step before the timed calls: a version of dokoro whose
    manifest is keyed to the database's absolute path starts it anew on a copy, and its first calls
    would render the whole backlog (500 memories each: the first 20 calls at 10k)."""
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    with Store.open(store_dir, retrieval=RetrievalConfig(embedder=embedder)) as store:
        while store.memories.sync_files().rendered:
            pass


async def _rate(client: Client, tool: str, make: Any, count: int) -> tuple[list[float], float]:
    pid = _child()
    for i in range(5):  # warm up (models load on the first write)
        outcome = await client.call_tool(tool, make(10_000_000 + i))
        assert not outcome.is_error, outcome.content
    # The first LanceDB write-behind step runs MIRROR_DELAY after the first write and imports
    # lancedb (about a second of CPU, once per process): let it pass before the timed calls.
    await anyio.sleep(MIRROR_DELAY + 1.5)
    before = _cpu_ms(pid)
    samples = []
    for i in range(count):
        arguments = make(i)
        started = time.perf_counter()
        outcome = await client.call_tool(tool, arguments)
        samples.append((time.perf_counter() - started) * 1000)
        assert not outcome.is_error, outcome.content
    # The write-behind steps of the timed writes (LanceDB copy, entity graph) run in the server
    # after the last answer: wait for them, so their CPU counts in the CPU per call.
    await anyio.sleep(MIRROR_DELAY + 1.5)
    return samples, _cpu_ms(pid) - before


def _row(tool: str, samples: list[float], cpu_ms: float) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return (
        f"{tool:<24} {1000 / statistics.mean(ordered):>9.1f} {statistics.median(ordered):>9.1f} {p95:>9.1f}"
        f" {cpu_ms / len(samples):>9.1f}"
    )


async def main(items: int, writes: int, embedder: str, cache: Path | None, tools: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = Path(tmp) / "dokoro"
        started = time.perf_counter()
        if cache is not None and cache.exists():
            if not (cache / ".dokoro").is_dir():  # e.g. the folder that holds the kept store
                raise SystemExit(f"--store-cache {cache}: not a store this script filled; pass the store's own folder")
            shutil.copytree(cache, store_dir)  # a store this script filled before (same items, embedder)
            _settle(store_dir, embedder)
        else:
            _prepare(store_dir, items, embedder)
            if cache is not None:
                shutil.copytree(store_dir, cache)
        print(f"store of {items:,} memories + {items:,} documents ready in {time.perf_counter() - started:.0f} s")
        env = _env(store_dir)
        env["DOKORO_EMBEDDER"] = embedder
        params = StdioServerParameters(command=sys.executable, args=["-m", "dokoro"], env=env)
        print(f"sequential writes over stdio, one agent; latency and server CPU in ms per call ({writes} calls)")
        print(f"{'tool':<24} {'writes/s':>9} {'p50':>9} {'p95':>9} {'cpu/call':>9}")
        async with Client(params) as client:

            def memory(i: int) -> dict[str, Any]:
                kind, title, body, entities = _fill(1, random.Random(20_000_000 + i))[0]
                return {"type": kind, "title": title, "body": f"{body} (write {i})", "entities": entities}

            def document(i: int) -> dict[str, Any]:
                kind, title, body, _entities = _fill(1, random.Random(30_000_000 + i))[0]
                return {"doc_id": f"bench-{i}", "title": title, "content": f"{body}\n\nWritten by call {i} ({kind})."}

            if "dokoro_remember" in tools:
                print(_row("dokoro_remember", *await _rate(client, "dokoro_remember", memory, writes)), flush=True)
            if "search_index_content" in tools:
                print(_row("search_index_content", *await _rate(client, "search_index_content", document, writes)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--embedder", default="auto")
    parser.add_argument("--store-cache", type=Path, default=None, help="keep the filled store here and reuse it")
    parser.add_argument(
        "--tool",
        action="append",
        choices=["dokoro_remember", "search_index_content"],
        help="time only this tool (repeatable; default both)",
    )
    args = parser.parse_args()
    tools = args.tool or ["dokoro_remember", "search_index_content"]
    anyio.run(main, args.items, args.writes, args.embedder, args.store_cache, tools)
