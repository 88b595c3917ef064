"""Ingest speed on LoCoMo: turns per second and CPU per turn, by stage.

Every turn of the chosen conversations of ``../shared/bench/locomo-dev.json`` is saved and indexed
into a fresh store exactly as ``bench/locomo_retrieval.py`` does (``save_many`` then ``index_docs``:
chunking, embedding, full text, the vector engine, entity extraction through the indexing
listener). The stages are timed by wrapping the functions that do them (wall and process CPU, every
thread counted):

- *save*: ``save_many`` (the documents' rows);
- *chunk*: ``chunk_text``;
- *embed*: ``Indexer.embed`` (the embedder, every thread it uses);
- *extract*: the entity-extraction listener (regexes and the graph's writes);
- *write*: the rest of ``index_docs`` (chunk rows, full text, vector engine, stamps).

    uv run python bench/ingest_speed.py                     # all 7 conversations
    uv run python bench/ingest_speed.py --convs 0 --repeat 3  # one conversation, three times
    uv run python bench/ingest_speed.py --stages              # CPU by stage, batches one after another

``index_docs`` embeds the next batch on a thread while it writes the current one, so the stages
overlap; ``--stages`` runs the embedding inline (no overlap, the same work) to time each stage apart.
CPU per turn is the steadier figure on a shared machine; wall time counts the other processes too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.documents.service import NewDocument
from locomo_retrieval import DATA, doc_id_of, turns_of

STAGES = ("save", "chunk", "embed", "extract", "write")
_times: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
_depth: dict[str, int] = defaultdict(int)


@contextmanager
def timed(stage: str) -> Iterator[None]:
    """Add the wall and CPU time of the block to ``stage`` (its outermost block only)."""
    _depth[stage] += 1
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        _depth[stage] -= 1
        if _depth[stage] == 0:
            _times[stage][0] += time.perf_counter() - wall
            _times[stage][1] += time.process_time() - cpu


def wrap(owner: Any, name: str, stage: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with timed(stage):
            return original(*args, **kwargs)

    setattr(owner, name, wrapper)


class _Inline(ThreadPoolExecutor):
    """An executor that runs each task on the caller's thread (no overlap between the stages)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def instrument() -> None:
    from dokoro_store.background.steps import Background
    from dokoro_store.semantic.documents.indexing import batch as indexing
    from dokoro_store.semantic.graph.indexer import GraphExtraction

    inline = _Inline(max_workers=1)
    Background.pool = lambda _self, _name, workers=1: inline  # type: ignore[method-assign]

    wrap(indexing, "chunk_text", "chunk")
    wrap(indexing.Indexer, "embed", "embed")
    wrap(GraphExtraction, "on_documents_indexed", "extract")


def ingest(turns: list[dict[str, Any]], config: RetrievalConfig) -> tuple[float, float]:
    """Ingest into a fresh store; returns (wall seconds, CPU seconds) of save + index."""
    with tempfile.TemporaryDirectory(prefix="ingest-") as tmp:
        store = Store.open(Path(tmp) / "dokoro", retrieval=config)
        try:
            store.embedder.get()  # resolve the embedder (and load nothing else) outside the timing
            docs = [
                NewDocument(
                    doc_id_of(t["dia"]), t["text"], title=t["date"] or t["dia"], thread=t["thread"], thread_pos=t["pos"]
                )
                for t in turns
            ]
            wall, cpu = time.perf_counter(), time.process_time()
            with timed("save"):
                store.docs.save_many(docs)
            with timed("index"):
                store.docs.index_docs([d.id for d in docs])
            return time.perf_counter() - wall, time.process_time() - cpu
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA), help="Path of locomo-dev.json.")
    parser.add_argument("--convs", default="0-6", help="Conversations: '0-6', '0,2'.")
    parser.add_argument("--embedder", default="auto", choices=["auto", "onnx", "static", "hashing", "none"])
    parser.add_argument("--repeat", type=int, default=1, help="Ingest each conversation this many times.")
    parser.add_argument("--stages", action="store_true", help="Time each stage (embedding inline, no overlap).")
    args = parser.parse_args()
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    if "-" in args.convs:
        first, last = args.convs.split("-")
        convs = list(range(int(first), int(last) + 1))
    else:
        convs = [int(c) for c in args.convs.split(",")]
    config = RetrievalConfig(embedder=args.embedder)
    # Warm up: load the model and the code paths on a few turns, outside the figures.
    ingest(turns_of(data[convs[0]])[:20], config)
    if args.stages:
        instrument()
    _times.clear()
    turns_total, wall_total, cpu_total = 0, 0.0, 0.0
    load_start = os.getloadavg()
    for _ in range(args.repeat):
        for index in convs:
            turns = turns_of(data[index])
            wall, cpu = ingest(turns, config)
            turns_total += len(turns)
            wall_total += wall
            cpu_total += cpu
            print(
                f"  conv {index}: {len(turns)} turns, {len(turns) / wall:.0f} turns/s, "
                f"{cpu / len(turns) * 1000:.2f} ms CPU/turn",
                file=sys.stderr,
            )
    load_end = os.getloadavg()
    print(
        f"{turns_total} turns: {turns_total / wall_total:.0f} turns/s wall, "
        f"{cpu_total / turns_total * 1000:.2f} ms CPU per turn"
        + (" (stages timed one after another)" if args.stages else "")
    )
    if args.stages:
        index_wall, index_cpu = _times.pop("index")
        inner_wall = sum(_times[s][0] for s in STAGES if s not in ("save", "write"))
        inner_cpu = sum(_times[s][1] for s in STAGES if s not in ("save", "write"))
        _times["write"] = [index_wall - inner_wall, index_cpu - inner_cpu]
        print("| stage | wall ms/turn | CPU ms/turn | share of CPU |")
        print("|---|---|---|---|")
        for stage in STAGES:
            wall, cpu = _times[stage]
            share = cpu / cpu_total
            print(f"| {stage} | {wall / turns_total * 1000:.2f} | {cpu / turns_total * 1000:.2f} | {share:.0%} |")
        print(f"| all | {wall_total / turns_total * 1000:.2f} | {cpu_total / turns_total * 1000:.2f} | |")
    print(
        f"load average: start {' '.join(f'{v:.1f}' for v in load_start)}, "
        f"end {' '.join(f'{v:.1f}' for v in load_end)} (2 cores)"
    )


if __name__ == "__main__":
    main()
