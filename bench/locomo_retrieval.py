"""Retrieval on LoCoMo: evidence recall@5/@10 and MRR@10 of full text, vectors and hybrid search.

Reads ``../shared/bench/locomo-dev.json`` (never copied into the repository: CC BY-NC 4.0) as its
README says: one store per conversation, every turn one document (``"<speaker>: <text>"`` plus
``" [shares <caption>]"``, the session date as its title), every question (categories 1-4; 5 is
shown apart) asked verbatim through ``store.search.universal`` in each mode, top 10.

    uv run python bench/locomo_retrieval.py                 # all conversations, static embedder
    uv run python bench/locomo_retrieval.py --limit-convs 2 --embedder hashing --engine exact

Prints one table per mode (per category and overall for 1-4), search latency p50/p95 in process,
ingest throughput (turns/s, embedding included), and a markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.retrieval.documents import NewDocument

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# (name, search mode, graph signal): "hybrid" is what search_universal does by default (full text,
# vectors and, when the entity graph links documents to entities named in the question, the graph).
MODES = ("keyword", "semantic", "hybrid-nograph", "hybrid")
_SEARCH = {
    "keyword": ("keyword", False),
    "semantic": ("semantic", False),
    "hybrid-nograph": ("hybrid", False),
    "hybrid": ("hybrid", True),
}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def _dia(session: int, turn: int) -> str:
    return f"D{session}:{turn}"


def _doc_id(dia_id: str) -> str:
    return "t-" + dia_id.lower().replace(":", "-")


def turns_of(conversation: dict) -> list[dict]:
    """Every turn with its normalised dia id and its session's date."""
    conv = conversation["conversation"]
    keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    out = []
    for key in keys:
        date = str(conv.get(f"{key}_date_time", ""))
        for turn in conv[key]:
            match = _EVIDENCE.search(str(turn["dia_id"]))
            if not match:
                continue
            dia = _dia(int(match.group(1)), int(match.group(2)))
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            out.append({"dia": dia, "date": date, "text": text})
    return out


def evidence_of(qa: dict, known: set[str]) -> list[str]:
    found: list[str] = []
    for item in qa.get("evidence", []):
        for part in re.split(r"[;\s]+", str(item)):
            match = _EVIDENCE.search(part)
            if match:
                dia = _dia(int(match.group(1)), int(match.group(2)))
                if dia in known and dia not in found:
                    found.append(dia)
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def run(args: argparse.Namespace) -> dict:
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))[: args.limit_convs or None]
    config = RetrievalConfig(embedder=args.embedder, vector_engine=args.engine)
    scores: dict[str, dict[int, list[tuple[float, float, float]]]] = {m: defaultdict(list) for m in MODES}
    latency: dict[str, list[float]] = {m: [] for m in MODES}
    ingest_turns = 0
    ingest_seconds = 0.0
    engine = embedder = "?"
    for conversation in data:
        turns = turns_of(conversation)
        known = {t["dia"] for t in turns}
        with (
            tempfile.TemporaryDirectory(prefix="locomo-") as tmp,
            Store.open(Path(tmp) / "dokoro", retrieval=config) as store,
        ):
            started = time.perf_counter()
            store.docs.save_many(
                [NewDocument(_doc_id(t["dia"]), t["text"], title=t["date"] or t["dia"]) for t in turns]
            )
            report = store.docs.index_docs([_doc_id(t["dia"]) for t in turns])
            ingest_seconds += time.perf_counter() - started
            ingest_turns += len(turns)
            embedder = report.embedder or "none"
            engine = store.search.status().vector_engine_label
            store.search.universal("warm up", limit=10)  # load the model and caches outside the timings
            back = {_doc_id(t["dia"]): t["dia"] for t in turns}
            for qa in conversation["qa"]:
                gold = evidence_of(qa, known)
                if not gold:
                    continue
                category = int(qa["category"])
                for mode in MODES:
                    search_mode, graph = _SEARCH[mode]
                    started = time.perf_counter()
                    result = store.search.universal(
                        str(qa["question"]), limit=10, mode=search_mode, depth=args.depth, graph=graph
                    )
                    latency[mode].append((time.perf_counter() - started) * 1000)
                    got = [back.get(hit.doc_id) for hit in result.hits]
                    r5 = len(set(gold) & set(got[:5])) / len(gold)
                    r10 = len(set(gold) & set(got[:10])) / len(gold)
                    rr = next((1.0 / (i + 1) for i, dia in enumerate(got[:10]) if dia in gold), 0.0)
                    scores[mode][category].append((r5, r10, rr))
        print(f"  {conversation['sample_id']}: {len(turns)} turns", file=sys.stderr)
    return {
        "scores": scores,
        "latency": latency,
        "ingest": ingest_turns / ingest_seconds if ingest_seconds else 0.0,
        "engine": engine,
        "embedder": embedder,
        "conversations": len(data),
    }


def _mean(rows: list[tuple[float, float, float]], i: int) -> float:
    return statistics.fmean(r[i] for r in rows) if rows else 0.0


def report(outcome: dict) -> str:
    lines = [
        f"conversations: {outcome['conversations']}; embedder: {outcome['embedder']}; vectors: {outcome['engine']}",
        f"ingest: {outcome['ingest']:.0f} turns/s (chunking, embedding and index writes included)",
        "",
        "| retriever | category | n | R@5 | R@10 | MRR@10 |",
        "|---|---|---|---|---|---|",
    ]
    names = {
        "keyword": "full text (FTS5 OR'ed, bm25)",
        "semantic": "vectors only",
        "hybrid-nograph": "hybrid: full text + vectors (RRF k=60)",
        "hybrid": "hybrid + graph signal (default)",
    }
    for mode in MODES:
        by_cat = outcome["scores"][mode]
        for category in (1, 2, 3, 4):
            rows = by_cat.get(category, [])
            lines.append(
                f"| {names[mode]} | {category} {CATEGORIES[category]} | {len(rows)} | {_mean(rows, 0):.3f} | "
                f"{_mean(rows, 1):.3f} | {_mean(rows, 2):.3f} |"
            )
        overall = [row for c in (1, 2, 3, 4) for row in by_cat.get(c, [])]
        lines.append(
            f"| **{names[mode]}** | **1-4 overall** | {len(overall)} | **{_mean(overall, 0):.3f}** | "
            f"**{_mean(overall, 1):.3f}** | **{_mean(overall, 2):.3f}** |"
        )
    lines += ["", "| retriever | search p50 (ms) | search p95 (ms) |", "|---|---|---|"]
    for mode in MODES:
        values = outcome["latency"][mode]
        lines.append(f"| {names[mode]} | {percentile(values, 0.5):.1f} | {percentile(values, 0.95):.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA), help="Path of locomo-dev.json.")
    parser.add_argument("--limit-convs", type=int, default=0, help="Only the first N conversations (0 = all).")
    parser.add_argument("--embedder", default="static", choices=["auto", "static", "ollama", "hashing", "none"])
    parser.add_argument("--engine", default="auto", choices=["auto", "lancedb", "exact"])
    parser.add_argument("--depth", type=int, default=None, help="Candidates per leg (default max(1.5*limit, 10)).")
    args = parser.parse_args()
    print(report(run(args)))


if __name__ == "__main__":
    main()
