"""Procedural memory costs: plan writes, the archive sweep, the context inspector and the planning
helpers, on the embedded store (SQLite, bundled static embedder, exact vector scan).

Reports the median and 95th percentile of each operation. Usage:

    uv run python bench/procedural.py [--plans 50] [--daily 500] [--events 2000] [--docs 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig

WORDS = [
    "cache",
    "session",
    "login",
    "token",
    "queue",
    "broker",
    "stream",
    "index",
    "vector",
    "search",
    "plan",
    "sweep",
    "archive",
    "claim",
    "deploy",
    "rollout",
    "canary",
    "metric",
    "alert",
    "budget",
    "schema",
    "migration",
    "export",
    "import",
    "report",
    "billing",
]


def _timed(samples: list[float], fn: Callable[[], object]) -> object:
    started = time.perf_counter()
    out = fn()
    samples.append((time.perf_counter() - started) * 1000)
    return out


def _report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    print(f"{name:42} n={len(samples):5}  median {statistics.median(samples):8.2f} ms  p95 {p95:8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plans", type=int, default=50)
    parser.add_argument("--daily", type=int, default=500)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=200)
    args = parser.parse_args()

    clock = FrozenClock(datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC))
    root = Path(tempfile.mkdtemp()) / "dokoro"
    config = RetrievalConfig(embedder="static", vector_engine="exact")
    with Store.open(root, clock=clock, retrieval=config) as store:
        create: list[float] = []
        check: list[float] = []
        validate: list[float] = []
        for n in range(args.plans):
            plan = _timed(create, lambda n=n: store.plans.create(f"plan {n}", [f"step {i}" for i in range(10)]))
            for i in range(1, 11):
                _timed(check, lambda i=i, plan=plan: store.plans.check(i, plan_id=plan.id))  # type: ignore[attr-defined]
            _timed(validate, lambda plan=plan: store.plans.validate(plan_id=plan.id))  # type: ignore[attr-defined]
        listing: list[float] = []
        for _ in range(20):
            _timed(listing, lambda: store.plans.list())
        _report("plan_create (10 items)", create)
        _report("plan_check", check)
        _report("plan_validate (report + archive)", validate)
        _report(f"plan_list ({args.plans} plans)", listing)

        daily = root / "daily"
        daily.mkdir(exist_ok=True)
        start = datetime(2026, 1, 5, tzinfo=UTC)
        for n in range(args.daily):
            day = start + timedelta(days=n % 150)
            (daily / f"{day:%Y-%m-%d}-09h00-session-{n}.md").write_text(f"# note {n}\n", encoding="utf-8")
        dry: list[float] = []
        _timed(dry, lambda: store.archive.sweep(dry_run=True))
        real: list[float] = []
        moved = _timed(real, lambda: store.archive.sweep())
        idle: list[float] = []
        for _ in range(10):
            _timed(idle, lambda: store.archive.sweep())
        _report(f"archive_sweep dry run ({args.daily} files)", dry)
        _report(f"archive_sweep moving {len(moved.moved_daily)} files", real)  # type: ignore[attr-defined]
        _report("archive_sweep with nothing to do", idle)

        log: list[float] = []
        for n in range(args.events):
            event = {
                "event": "context_inspect",
                "sessionId": f"s-{n % 7}",
                "turn": n,
                "timestamp": f"2026-06-{1 + n % 9:02d}T10:00:00Z",
                "totalEstimate": 1000,
                "layers": [
                    {
                        "name": "memory",
                        "reason": WORDS[n % len(WORDS)],
                        "tokenEstimate": 10,
                        "contentSnippet": "x" * 300,
                    }
                ],
            }
            _timed(log, lambda event=event: store.context.log(event))
        last: list[float] = []
        search: list[float] = []
        for _ in range(20):
            _timed(last, lambda: store.context.last(5))
            _timed(search, lambda: store.context.search("nothing-matches-this", 10))
        _report("context_log", log)
        _report("context_last (5)", last)
        _report(f"context_search full scan ({min(args.events, 5000)} events)", search)

        for n in range(args.docs):
            words = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(40))
            store.docs.save(
                f"doc-{n}", f"# Note {n}\n\n{words}. The {WORDS[n % len(WORDS)]} broke once.", title=f"Note {n}"
            )
        first: list[float] = []
        _timed(first, lambda: store.planning.detect_conflicts("warm up the index"))
        conflicts: list[float] = []
        history: list[float] = []
        duplicate: list[float] = []
        for n in range(20):
            _timed(conflicts, lambda n=n: store.planning.detect_conflicts(f"{WORDS[n]} {WORDS[n + 1]} change"))
            _timed(history, lambda n=n: store.planning.regression_history(WORDS[n]))
            _timed(duplicate, lambda n=n: store.planning.check_duplicate(f"{WORDS[n]} feature"))
        _report(f"first planning call (indexes {args.docs} docs)", first)
        _report(f"detect_conflicts ({args.docs} docs)", conflicts)
        _report("regression_history", history)
        _report("check_duplicate", duplicate)


if __name__ == "__main__":
    main()
