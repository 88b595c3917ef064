"""Typed-memory recall on LoCoMo: every turn stored as a memory, each question asked through recall.

Reads ``../shared/bench/locomo-dev.json`` (never copied into the repository). One store per
conversation; each turn becomes an ``episode`` memory (title = session date, body = ``"<speaker>:
<text>"`` plus its shared image caption, entity = the speaker, thread = its session and place in
it), bulk-imported with ``store.memories.remember_many``. Every question of categories 1-4 is asked
verbatim through ``store.memories.recall`` — the call ``dokoro_recall`` makes — top 10, use not
counted, and scored against the gold evidence turns. Row ``+use`` asks the same questions in order
with use counted (every returned hit a use, as the tool does), in a store of its own, so each
answer is ranked with the heat of the recalls before it; ``+use-before`` does the same with the
weathering recall had before its near-tie rule (relevance × trust × state × (1 + freshness + heat)).

    uv run python bench/locomo_memories.py [--embedder auto|onnx|static|hashing|none] [--rows default,...]

Rows: ``default`` is recall exactly as the tool runs it; ``mcp`` is the same through the MCP tools
over stdio (``bench/locomo_mcp.py``: ``dokoro_remember`` with ``session_id``, ``dokoro_recall``);
``-threads`` imports the memories without their session thread. Recall ranks with the search's one
path (``SearchService.ranked``): the search engine's ablations are ``bench/locomo_retrieval.py``'s
rows over the same turns. Tuned on conversations 0-3 only; the tuning fold, the report fold (4-6)
and the whole split are printed apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.memories import recall as memory_recall
from dokoro_store.semantic.memories.service import MemoryDraft
from locomo_retrieval import DATA, FOLDS, Row, Scores, evidence_of, report, score_list, turns_of


def rows_for() -> list[Row]:
    return [
        Row("default", "hybrid", None, "dokoro_recall as the MCP tool runs it (use not counted)"),
        Row("mcp", "hybrid", None, "through the MCP tools over stdio (session_id passed; use counted)"),
        Row("+use", "hybrid", None, "the same with use counted, questions asked in order"),
        Row("+use-before", "hybrid", None, "use counted, heat multiplying relevance (before the rule)"),
        Row("-threads", "hybrid", None, "memories imported without their session thread"),
    ]


def _ingest(store: Store, turns: list[dict[str, Any]], threads: bool) -> dict[str, str | None]:
    drafts = [
        MemoryDraft(
            type="episode",
            title=f"{t['date']} ({t['dia']})",
            body=t["text"],
            entities=[t["text"].split(":", 1)[0]],
            source=t["dia"],
            thread=t["thread"] if threads else None,
            thread_pos=t["pos"] if threads else None,
        )
        for t in turns
    ]
    return {row.id: row.source for row in store.memories.remember_many(drafts)}


_WEATHER_NOW = memory_recall.weather  # the rule as it is (the before row patches the module's)


def _weather_before(memory: Any, relevance: float, now: Any) -> tuple[float, dict[str, float]]:
    """Recall's weathering before the near-tie rule: freshness and heat multiplied relevance."""
    _score, parts = _WEATHER_NOW(memory, relevance, now)
    trust = memory_recall._TRUST_WEIGHT.get(memory.trust, 0.7)
    state = memory_recall._STATE_WEIGHT.get(memory.state, 0.1)
    return relevance * trust * state * (1 + parts["freshness"] + parts["heat"]), parts


def run(data: list[dict[str, Any]], convs: list[int], config: RetrievalConfig, rows: list[Row]) -> dict[str, Any]:
    scores: Scores = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    latency: dict[str, list[float]] = defaultdict(list)
    ingested, ingest_seconds = 0, 0.0
    embedder = engine = "?"
    # Rows that change the store (no threads; use counted) get a store of their own.
    own = ("-threads", "+use", "+use-before")
    variants = [
        (False, [r for r in rows if r.name == "-threads"]),
        (True, [r for r in rows if r.name == "+use"]),
        (True, [r for r in rows if r.name == "+use-before"]),
        (True, [r for r in rows if r.name not in own]),
    ]
    for index in convs:
        conversation = data[index]
        turns = turns_of(conversation)
        known = {t["dia"] for t in turns}
        for threads, wanted in variants:
            if not wanted:
                continue
            with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "dokoro", retrieval=config) as store:
                started = time.perf_counter()
                dia_of = _ingest(store, turns, threads)
                if threads and wanted[0].name not in own:
                    ingest_seconds += time.perf_counter() - started
                    ingested += len(turns)
                status = store.search.status()
                embedder, engine = status.embedder or "none", status.vector_engine_label
                store.memories.recall("warm up", count_use=False)
                for qa in conversation["qa"]:
                    category = int(qa.get("category", 0))
                    gold = evidence_of(qa, known)
                    if category not in (1, 2, 3, 4) or not gold:
                        continue
                    for row in wanted:
                        started = time.perf_counter()
                        counted = row.name.startswith("+use")
                        weathering = _weather_before if row.name == "+use-before" else _WEATHER_NOW
                        with mock.patch.object(memory_recall, "weather", weathering):
                            hits = store.memories.recall(str(qa["question"]), limit=10, count_use=counted)
                        latency[row.name].append((time.perf_counter() - started) * 1000)
                        found = [dia_of.get(h.memory.id) for h in hits]
                        scores[row.name][index][category].append(score_list(gold, found))
        print(f"  {conversation['sample_id']}: {len(turns)} memories", file=sys.stderr)
    return {
        "scores": scores,
        "latency": latency,
        "ingest": ingested / ingest_seconds if ingest_seconds else 0.0,
        "embedder": embedder,
        "engine": engine,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="auto", choices=["auto", "onnx", "static", "hashing", "none"])
    parser.add_argument("--folds", default="tune,report,all", help="Which folds to print (tune, report, all).")
    parser.add_argument("--rows", default="", help="Comma-separated rows to run (default: all).")
    args = parser.parse_args()
    folds = args.folds.split(",")
    data = json.loads(DATA.read_text(encoding="utf-8"))
    convs = sorted({i for fold in folds for i in FOLDS[fold] if i < len(data)})
    rows = rows_for()
    if args.rows:
        rows = [r for r in rows if r.name in args.rows.split(",")]
    in_process = [r for r in rows if r.name != "mcp"]
    outcome = run(data, convs, RetrievalConfig(embedder=args.embedder), in_process)
    if len(in_process) < len(rows):
        from locomo_mcp import run_mcp

        mcp = run_mcp(data, convs, "memory", args.embedder)
        outcome["scores"]["mcp"] = mcp["scores"]["mcp"]
        outcome["latency"]["mcp"] = mcp["latency"]
        print(f"ingest through dokoro_remember over stdio: {mcp['ingest']:.0f} memories/s")
    print("LoCoMo typed-memory recall (store.memories.recall, top 10)")
    print(report(outcome, rows, folds).replace("turns/s", "memories/s"))


if __name__ == "__main__":
    main()
