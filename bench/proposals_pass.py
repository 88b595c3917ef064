"""The proposals' pass (``store.proposals.scan``) on stores of growing size: its work is bounded.

A store of N memories (bulk-imported, hashing embedder: the pass reads no vector), a tenth of them
episodes sharing one of 50 entities, with a clock moved 100 days on, so every memory is a prune
candidate and every entity a run of aging episodes; plus 30 tool failures of one pattern. Timed:
the first pass (it files at most 20 proposals of a kind) and the next one on the same store (the
best of three; it files the next page of prune candidates, as the first ones wait).

    uv run python bench/proposals_pass.py [--sizes 10000,50000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.memories.service import MemoryDraft

START = datetime(2026, 6, 1, tzinfo=UTC)


def build(root: Path, size: int, clock: FrozenClock) -> Store:
    store = Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing"))
    drafts = [
        MemoryDraft(
            type="episode" if n % 10 == 0 else "fact",
            title=f"memory {n}",
            body=f"Observation number {n} about component {n % 997} and its owner {n % 89}.",
            entities=[f"entity-{(n // 10) % 50}"],
            created_at=START,
        )
        for n in range(size)
    ]
    for start in range(0, size, 5_000):
        store.memories.remember_many(drafts[start : start + 5_000])
    for n in range(30):  # within the failure window of the moved clock
        store.feedback.record(
            "claude",
            "dokoro_plan_check",
            "failure",
            error_message="index out of range",
            recorded_at=START + timedelta(days=99, minutes=n),
        )
    clock.set(START + timedelta(days=100))
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,50000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print("| memories | first pass | filed | second pass | filed |")
    print("|---:|---:|---:|---:|---:|")
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            clock = FrozenClock(START)
            store = build(Path(folder) / "dokoro", size, clock)
            try:
                started = time.perf_counter()
                first = store.proposals.scan()
                first_s = time.perf_counter() - started
                again: list[float] = []
                for _ in range(3):
                    started = time.perf_counter()
                    second = store.proposals.scan()
                    again.append(time.perf_counter() - started)
            finally:
                store.close()
        print(f"| {size:,} | {first_s * 1000:.0f} ms | {len(first)} | {min(again) * 1000:.0f} ms | {len(second)} |")


if __name__ == "__main__":
    main()
