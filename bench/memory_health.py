"""What the memories' upkeep costs at read as the store grows (issue 32): the health line, the
review list, the status, and the stale check a ranking adds, at 10k and 100k memories (SQLite).

The fill: ``remember_many`` of N synthetic memories (the hashing embedder: vectors are not what is
measured), then 1% of them given a ``review_after`` a day past (stale by date), and 500 ``depends_on``
links of which 50 point at a memory retired since (stale by dependency). Timed, 30 calls each after
one untimed call, median and p95 (ms, wall): ``health_line`` (what ``dokoro_briefing`` and
``dokoro_memory_status`` add), ``store.upkeep.review(limit=50)`` (``dokoro_memory_review``),
``store.memories.status(reconcile=False)`` (``dokoro_memory_status``), and
``broken_dependencies`` over 50 ids (the one query ``dokoro_recall`` and ``search_universal`` add per
call to tell stale memories by dependency).

Since issue 46 the line also counts open contradictions (gate pairs without a verdict, both memories
active) and unused memories (active, 90 days old or more, never used): the fill gives half of the
memories a creation date 120 days back, records 2% of them in open gate pairs and 10% in decided
ones, and the two counts are timed alone too (``open_contradictions``, ``unused``).

    uv run python bench/memory_health.py [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dokoro_store import Store
    from sqlmodel import Session


def _timed(call: Callable[[], object], runs: int = 30) -> tuple[float, float]:
    call()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def run(size: int) -> dict[str, object]:
    from dokoro_store import Store
    from dokoro_store.db.write_guard import writing
    from dokoro_store.models.memories import Memory as MemoryRow
    from dokoro_store.models.memories import MemoryConflict
    from dokoro_store.retrieval import RetrievalConfig
    from dokoro_store.semantic.memories import repository
    from dokoro_store.semantic.memories.health import health_line, open_contradictions, unused
    from dokoro_store.semantic.memories.lifecycle import broken_dependencies
    from dokoro_store.semantic.memories.service import MemoryDraft
    from sqlalchemy import update
    from sqlmodel import col, select

    rng = random.Random(size)
    kinds = ("fact", "decision", "lesson", "episode", "reference")
    drafts = [
        MemoryDraft(
            type=rng.choice(kinds),
            title=f"Service {i % 997} note {i}",
            body=f"Service {i % 997} talks to queue {i % 113} through port {1000 + i % 5000}.",
            entities=[f"service-{i % 997}"],
        )
        for i in range(size)
    ]
    with (
        tempfile.TemporaryDirectory() as folder,
        Store.open(Path(folder) / "dokoro", retrieval=RetrievalConfig(embedder="hashing")) as store,
    ):
        started = time.perf_counter()
        for start in range(0, size, 5_000):
            store.memories.remember_many(drafts[start : start + 5_000])
        fill_s = time.perf_counter() - started
        now = store.clock.now()
        with store.db.read() as session:
            ids = list(session.exec(select(MemoryRow.id).order_by(col(MemoryRow.id))))
        dated = rng.sample(ids, size // 100)
        linked = rng.sample(ids, 1000)
        with store.db.write() as session:
            rows = {m.id: m for m in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(dated)))}
            for memory_id in dated:
                repository.rewrite(session, rows[memory_id], {"review_after": now - timedelta(days=1)})
            for dependent, target in zip(linked[:500], linked[500:], strict=True):
                repository.link(session, dependent, [target], now=now)
            retired = {m.id: m for m in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(linked[500:550])))}
            for row in retired.values():
                repository.set_state(session, row, "deprecated", reason="bench", now=now)
        aged = rng.sample(ids, size // 2)
        paired = rng.sample(ids, size // 5)
        with store.db.write() as session, writing(session):  # a bench's back-dating, past the repository
            for start in range(0, len(aged), 500):
                session.execute(
                    update(MemoryRow)
                    .where(col(MemoryRow.id).in_(aged[start : start + 500]))
                    .values(created_at=now - timedelta(days=120))
                )
            for n, (new_id, old_id) in enumerate(zip(paired[::2], paired[1::2], strict=True)):
                session.add(
                    MemoryConflict(
                        pair_hash=repository.pair_hash(new_id, old_id),
                        new_id=new_id,
                        old_id=old_id,
                        shown_at=now,
                        verdict=None if n % 6 == 0 else "keep_both",
                    )
                )
        line = health_line(store.db, store.clock)
        probe = rng.sample(ids, 50)

        def broken() -> object:
            with store.db.read() as session:
                return broken_dependencies(session.connection(), probe)

        return {
            "size": size,
            "fill_s": round(fill_s, 1),
            "line": line,
            "health_line": _timed(lambda: health_line(store.db, store.clock)),
            "review": _timed(lambda: store.upkeep.review(limit=50)),
            "status": _timed(lambda: store.memories.status(reconcile=False)),
            "broken_dependencies_50": _timed(broken),
            "open_contradictions": _timed(lambda: _in_session(store, open_contradictions)),
            "unused": _timed(lambda: _in_session(store, lambda session: unused(session, now))),
        }


def _in_session(store: Store, count: Callable[[Session], int]) -> int:
    with store.db.read() as session:
        return count(session)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        row = run(size)
        print(f"{row['size']:>7} memories (fill {row['fill_s']} s): {row['line']}")
        for name in ("health_line", "open_contradictions", "unused", "review", "status", "broken_dependencies_50"):
            p50, p95 = row[name]  # type: ignore[misc]
            print(f"  {name:<24} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")


if __name__ == "__main__":
    main()
