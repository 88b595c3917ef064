"""Typed-memory recall on LoCoMo: every turn stored as a memory, each question asked through recall.

Reads ``../shared/bench/locomo-dev.json`` (never copied into the repository). One store per
conversation; each turn becomes an ``episode`` memory (title = session date, body = ``"<speaker>:
<text>"`` plus its shared image caption, entity = the speaker), bulk-imported with
``store.memories.remember_many``. Every question of categories 1-4 is asked verbatim through
``store.memories.recall`` (top 10, use not counted) and scored against the gold evidence turns.

    uv run python bench/locomo_memories.py [--limit-convs N] [--embedder static|hashing|none]

Prints evidence recall@5, recall@10 and MRR@10 per category and overall, recall latency p50/p95,
and ingest throughput.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.services.memories import MemoryDraft
from locomo_retrieval import CATEGORIES, DATA, evidence_of, percentile, turns_of


def run(limit_convs: int | None, embedder: str) -> None:
    conversations = json.loads(DATA.read_text(encoding="utf-8"))[: limit_convs or None]
    scores: dict[int, list[tuple[float, float, float]]] = defaultdict(list)
    latencies: list[float] = []
    ingested, ingest_seconds = 0, 0.0
    for conversation in conversations:
        turns = turns_of(conversation)
        known = {t["dia"] for t in turns}
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(Path(tmp) / "dokoro", retrieval=RetrievalConfig(embedder=embedder))
            started = time.perf_counter()
            drafts = [
                MemoryDraft(
                    type="episode",
                    title=f"{t['date']} ({t['dia']})",
                    body=t["text"],
                    entities=[t["text"].split(":", 1)[0]],
                    source=t["dia"],
                )
                for t in turns
            ]
            rows = store.memories.remember_many(drafts)
            ingest_seconds += time.perf_counter() - started
            ingested += len(rows)
            dia_of = {row.id: row.source for row in rows}
            for qa in conversation["qa"]:
                category = int(qa.get("category", 0))
                gold = evidence_of(qa, known)
                if category not in (1, 2, 3, 4) or not gold:
                    continue
                started = time.perf_counter()
                hits = store.memories.recall(str(qa["question"]), limit=10, count_use=False)
                latencies.append(time.perf_counter() - started)
                found = [dia_of.get(h.memory.id) for h in hits]
                r5 = len(set(found[:5]) & set(gold)) / len(gold)
                r10 = len(set(found[:10]) & set(gold)) / len(gold)
                mrr = next((1 / (i + 1) for i, dia in enumerate(found[:10]) if dia in gold), 0.0)
                scores[category].append((r5, r10, mrr))
            store.close()
    print(f"LoCoMo typed-memory recall — {len(conversations)} conversation(s), embedder={embedder}")
    print(f"{'category':<14} {'n':>5} {'R@5':>6} {'R@10':>6} {'MRR@10':>7}")
    every: list[tuple[float, float, float]] = []
    for category in sorted(scores):
        rows = scores[category]
        every += rows
        print(
            f"{CATEGORIES[category]:<14} {len(rows):>5} {statistics.mean(r[0] for r in rows):>6.3f} "
            f"{statistics.mean(r[1] for r in rows):>6.3f} {statistics.mean(r[2] for r in rows):>7.3f}"
        )
    print(
        f"{'overall 1-4':<14} {len(every):>5} {statistics.mean(r[0] for r in every):>6.3f} "
        f"{statistics.mean(r[1] for r in every):>6.3f} {statistics.mean(r[2] for r in every):>7.3f}"
    )
    print(
        f"recall latency p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p95 {percentile(latencies, 0.95) * 1000:.1f} ms; "
        f"ingest {ingested / ingest_seconds:.0f} memories/s (embedding included)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit-convs", type=int, default=None)
    parser.add_argument("--embedder", default="static", choices=["static", "hashing", "none"])
    args = parser.parse_args()
    run(args.limit_convs, args.embedder)
