"""``search_universal`` as the documents grow: p50/p95 wall and CPU per search at 10k and 100k documents.

One SQLite store per size, filled once (``--store-cache DIR`` keeps it): synthetic chat turns
(``"<Name>: <sentence>"``, 12 speakers, threads of 20 turns as sessions, the fill's vectors cached
on disk as ``bench/scale.py`` caches them). Then 120 searches in process, top 10: a third name one
speaker ("What did Ana say about the billing cache?": the vector leg also embeds the query less the
name, :mod:`dokoro_store.index.ranking.speakers`), a third name none, a third are a few words. Each
search is timed (wall, and the CPU of every thread of the process), the first pass untimed.

``--before DIR`` also times a checkout of another commit (``git archive <commit> | tar -x -C DIR``)
on the same stores, in alternating processes (before, after, before, after, ...), so the two are
measured in one run under the same load: the ratio is the figure to read on a shared machine.

    uv run python bench/search_scale.py [--sizes 10000,100000] [--embedder auto] [--store-cache DIR]
                                        [--before DIR] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import ADJ, CACHE, COMPONENTS, PEOPLE, SERVICES, TOOLS, _CachedEmbedder, _p

SAYINGS = [
    "the {s} {c} keeps its state in {t} and entries expire after {n} days",
    "I think the {s} {c} is {a} since we moved it to {t}",
    "we spent session {n} debugging the {a} {s} {c}, the culprit was {t}",
    "the {s} {c} listens on port {port} behind {t}",
    "can you review the pull request for the {s} {c}? it touches {n} files",
    "incident {n}: the {s} {c} failed because {t} was {a}",
    "I prefer small changes to the {s} {c}, the {t} check is {a}",
]


def _turns(size: int, rng: random.Random) -> list[tuple[str, str, str, int]]:
    """``size`` distinct turns: (doc id, text, thread, position)."""
    out: list[tuple[str, str, str, int]] = []
    seen: set[str] = set()
    while len(out) < size:
        slots = {
            "s": rng.choice(SERVICES),
            "c": rng.choice(COMPONENTS),
            "t": rng.choice(TOOLS),
            "a": rng.choice(ADJ),
            "n": rng.randrange(1, 5000),
            "port": rng.randrange(1024, 65000),
        }
        text = f"{rng.choice(PEOPLE)}: {rng.choice(SAYINGS).format(**slots)}"
        if text in seen:
            continue
        seen.add(text)
        place = len(out)
        out.append((f"turn-{place}", text, f"session-{place // 20}", place % 20))
    return out


def _queries(rng: random.Random) -> list[str]:
    out = []
    for i in range(120):
        s, c, t, p = rng.choice(SERVICES), rng.choice(COMPONENTS), rng.choice(TOOLS), rng.choice(PEOPLE)
        out.append(
            (
                f"What did {p} say about the {s} {c}?",
                f"which port does the {s} {c} use behind {t}",
                f"{s} {c} {t}",
            )[i % 3]
        )
    return out


def fill(folder: Path, size: int, embedder: str) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig
    from dokoro_store.semantic.documents.service import NewDocument

    turns = _turns(size, random.Random(size))
    with Store.open(folder, retrieval=RetrievalConfig(embedder=embedder)) as store:
        inner = store.embedder.get()
        assert inner is not None, "the fill needs an embedder"
        CACHE.mkdir(parents=True, exist_ok=True)
        cached = _CachedEmbedder(inner, CACHE / f"{inner.id.replace(':', '_')}-turns-{size}.npy")
        store.embedder._resolved = cached  # the fill's vectors from disk (as bench/scale.py does)
        for start in range(0, len(turns), 2000):
            batch = turns[start : start + 2000]
            docs = [NewDocument(d, text, title="Chat", thread=th, thread_pos=pos) for d, text, th, pos in batch]
            store.docs.save_many(docs)
            store.docs.index_docs([d for d, *_ in batch])
        store.docs.vector_index().optimise()
        cached.save()
        store.embedder._resolved = inner


def time_searches(folder: Path, embedder: str, size: int) -> dict[str, Any]:
    """In this process: every query once untimed, then once timed."""
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    queries = _queries(random.Random(7))
    with Store.open(folder, retrieval=RetrievalConfig(embedder=embedder)) as store:
        for query in queries:
            store.search.universal(query, limit=10)
        wall, cpu = [], []
        for query in queries:
            started, used = time.perf_counter(), time.process_time()
            store.search.universal(query, limit=10)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
        engine = store.search.status().vector_engine_label
    return {
        "size": size,
        "p50": _p(wall, 0.5),
        "p95": _p(wall, 0.95),
        "cpu50": _p(cpu, 0.5),
        "cpu95": _p(cpu, 0.95),
        "engine": engine,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--embedder", default="auto")
    parser.add_argument("--store-cache", type=Path, default=Path("/tmp/dokoro-search-scale"))
    parser.add_argument("--before", type=Path, default=None, help="A checkout of the commit to compare with.")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one", nargs=2, metavar=("FOLDER", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(time_searches(Path(args.one[0]), args.embedder, int(args.one[1]))))
        return
    here = Path(__file__).resolve().parents[1]
    trees = [("after", here)] + ([("before", args.before.resolve())] if args.before else [])
    print("| size | code | round | p50 ms | p95 ms | CPU p50 ms | CPU p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        folder = args.store_cache / f"{args.embedder}-{size}" / "dokoro"
        if not (folder / ".dokoro").is_dir():
            started = time.perf_counter()
            fill(folder, size, args.embedder)
            print(f"filled {size} documents in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        engine = ""
        for round_ in range(args.rounds):
            for name, tree in trees if round_ % 2 == 0 else trees[::-1]:
                paths = [str(p) for p in sorted(tree.glob("*/*/src"))]
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
                command = [sys.executable, str(tree / "bench" / "search_scale.py"), "--embedder", args.embedder]
                if name == "before":  # the older checkout's bench may lack --one: time it with this one's
                    command = [sys.executable, str(Path(__file__).resolve()), "--embedder", args.embedder]
                done = subprocess.run(
                    [*command, "--one", str(folder), str(size)], env=env, capture_output=True, text=True, check=True
                )
                row = json.loads(done.stdout.strip().splitlines()[-1])
                engine = row["engine"]
                print(
                    f"| {size:,} | {name} | {round_ + 1} | {row['p50']:.1f} | {row['p95']:.1f} | "
                    f"{row['cpu50']:.1f} | {row['cpu95']:.1f} |",
                    flush=True,
                )
        print(f"<!-- {size}: {engine} -->")
    print(f"\nload average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())} (2 cores)")


if __name__ == "__main__":
    main()
