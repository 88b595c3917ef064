"""Remember with several agents at once: N processes writing memories into one store of 10k.

Each process opens the store (a copy of a kept 10k store, filled by ``bench/mcp_writes.py``'s
``_prepare`` the first time), waits for the others, then remembers ``--writes`` new memories one
after another, each through the conflict gate, as an agent's ``dokoro_remember`` does (in process:
this measures the store, not the SDK). On SQLite the gate runs inside the write transaction, so
the others' writes wait for it: reported per N are the memories stored per second by all the
processes together, the median and 95th-percentile latency of one remember, and the CPU one
remember costs its process. Usage:

    uv run python bench/agents_remember.py [--procs 1,2,4] [--writes 100] [--store-cache DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORKER = r"""
import json, random, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from scale import _fill
from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig

root, me, writes = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
latencies = []
with Store.open(root, retrieval=RetrievalConfig(embedder="static")) as store:
    for i in range(3):  # warm up: the embedder, the gate's matrix
        kind, title, body, entities = _fill(1, random.Random(40_000_000 + 100 * me + i))[0]
        store.memories.remember(type=kind, title=title, body=f"{body} (warm {me}.{i})", entities=entities)
    print("ready", flush=True)
    sys.stdin.readline()
    cpu = time.process_time()
    for i in range(writes):
        kind, title, body, entities = _fill(1, random.Random(50_000_000 + 1000 * me + i))[0]
        started = time.perf_counter()
        store.memories.remember(type=kind, title=title, body=f"{body} (agent {me}, write {i})", entities=entities)
        latencies.append(time.perf_counter() - started)
    cpu = time.process_time() - cpu
print(json.dumps({"latencies": latencies, "cpu": cpu}), flush=True)
"""


def run(root: Path, procs: int, writes: int) -> dict[str, float]:
    here = str(Path(__file__).resolve().parent)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(root), str(me), str(writes), here],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for me in range(procs)
    ]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    results = []
    for worker in workers:
        out, _ = worker.communicate(timeout=600)
        results.append(json.loads(out.strip().splitlines()[-1]))
    elapsed = time.perf_counter() - started
    latencies = sorted(x * 1000 for r in results for x in r["latencies"])
    return {
        "procs": procs,
        "rate": len(latencies) / elapsed,
        "p50": statistics.median(latencies),
        "p95": latencies[int(len(latencies) * 0.95) - 1],
        "cpu": sum(r["cpu"] for r in results) * 1000 / len(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", default="1,2,4")
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--store-cache", type=Path, default=None, help="a store bench/mcp_writes.py filled (kept)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mcp_writes import _prepare, _settle

    print(f"{'processes':>9} {'stored/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'cpu ms':>8}")
    for procs in [int(p) for p in args.procs.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            store = Path(tmp) / "dokoro"
            if args.store_cache is not None and args.store_cache.exists():
                shutil.copytree(args.store_cache, store)
                _settle(store, "static")
            else:
                _prepare(store, 10_000, "static")
                if args.store_cache is not None:
                    shutil.copytree(store, args.store_cache)
            row = run(store, procs, args.writes)
        figures = f"{row['rate']:>9.1f} {row['p50']:>8.1f} {row['p95']:>8.1f} {row['cpu']:>8.1f}"
        print(f"{row['procs']:>9} {figures}", flush=True)


if __name__ == "__main__":
    main()
