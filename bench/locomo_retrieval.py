"""Retrieval on LoCoMo: evidence recall@5/@10 and MRR@10, with an ablation row for every change.

Reads ``../shared/bench/locomo-dev.json`` (never copied into the repository: CC BY-NC 4.0) as its
README says: one store per conversation, every turn one document (``"<speaker>: <text>"`` plus
``" [shares <caption>]"``, the session date as its title, the session as its thread and the turn's
place in it), every question of categories 1-4 asked verbatim through ``store.search.universal`` —
the call ``search_universal`` makes — top 10.

Honest tuning: the settings were tuned on conversations 0-3 (the *tuning* fold) only; the table
reports that fold, conversations 4-6 (the *report* fold) and the whole split apart.

    uv run python bench/locomo_retrieval.py                       # every row, default embedder
    uv run python bench/locomo_retrieval.py --rows default --embedder static
    uv run python bench/locomo_retrieval.py --set neighbour_weight=0.3 --rows default --folds tune

Rows: ``default`` is search_universal exactly as the MCP tool runs it; ``mcp`` is the same through the
MCP tools over stdio (``bench/locomo_mcp.py``: ``search_index_content`` with ``thread`` and ``at``,
``search_universal``); ``pieces`` is the same ranking rebuilt from the store's public pieces
(``bench/ablation.py``: the search takes no settings), and the line under the table says on how many
questions it ranks exactly as ``default``; ``-X`` rows are ``pieces`` with one change off (``--set``
changes the fusion settings of ``pieces`` and of every ``-X`` row); the baselines are full text
alone, vectors alone and the former reciprocal rank fusion.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ablation import Variant, ranking, without
from dokoro_store import Store
from dokoro_store.index.ranking.fusion import DEFAULT_FUSION, FusionSettings
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.documents.service import NewDocument

# ``../shared/bench`` beside the checkout (a worktree may sit deeper: the nearest one up is used).
DATA = next(
    (
        p / "shared" / "bench" / "locomo-dev.json"
        for p in Path(__file__).resolve().parents[1:]
        if (p / "shared" / "bench" / "locomo-dev.json").is_file()
    ),
    Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev.json",
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
FOLDS = {"tune": range(0, 4), "report": range(4, 7), "all": range(0, 7)}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    mode: str
    variant: Variant | None  # None: the product's own call (``store.search.universal``)
    what: str


# The first re-ranker (2026-11-30 morning): 30 candidates, static cosine and neighbour lift only
# (the weights of ``rerank.FEATURES``); the product's are ``rerank.WEIGHTS`` and ``RERANK_DEPTH``.
WEIGHTS_BEFORE: tuple[float, ...] = (0.0, 0.0, 0.2, 0.0, 0.75, *([0.0] * 13))
DEPTH_BEFORE = 30


def rows_for(base: Variant) -> list[Row]:
    """The baselines, the default, and the default with each change turned off, built from the store's
    public pieces (``bench/ablation.py``). (Rows of options measured and not kept, which the product no
    longer carries: ``docs/benchmarks-history.md``.)"""
    from dokoro_store.index.ranking.rerank import FEATURES

    changes: list[tuple[str, dict[str, Any], str]] = [
        ("-rerank", {"rerank": False}, "without the second stage (re-ranker)"),
        (
            "rerank-before",
            {"weights": WEIGHTS_BEFORE, "depth": DEPTH_BEFORE},
            "the first re-ranker (static cosine + lift, 30 candidates)",
        ),
    ]
    for label, names, what in (
        ("-speaker", ("speaker",), "re-ranker without the speaker-named feature"),
        ("-temporal", ("temporal",), "re-ranker without the temporal feature"),
        ("-rare", ("rare", "lifter_rare"), "re-ranker without rare-term coverage (own and lifter's)"),
        ("-date", ("date",), "re-ranker without the query's period matched to the candidates' dates"),
        ("-reply", ("asks", "reply"), "re-ranker without asks and reply (the re-ranker before issue 28's)"),
    ):
        changes.append((label, {"weights": without(names, base.weights)}, what))
    # Fitted at 2.0 on the tune fold and set to 0 (LoCoMo's turns are all short: it would lift
    # any long document over a short memory in a real store); the row shows what it was worth.
    fitted = tuple(2.0 if f == "length" else w for f, w in zip(FEATURES, base.weights, strict=True))
    changes.append(("+length", {"weights": fitted}, "re-ranker with the fitted length feature (not kept)"))
    fusion = base.fusion
    for label, setting, what in (
        ("-neighbours", "neighbour_weight", "without the lift from thread neighbours"),
        ("-feedback", "feedback_weight", "without pseudo-relevance feedback on vectors"),
        ("-graph", "graph_weight", "without the graph signal"),
    ):
        if getattr(fusion, setting) > 0:
            changes.append((label, {"fusion": dataclasses.replace(fusion, **{setting: 0.0})}, what))
    # Issue 48: the idea kept (off), and those measured and not kept (on; bench/retrieval_ideas.py).
    # Their settings are the best of a few tried on the tune fold (docs/benchmarks.md).
    changes += [
        ("-speaker-query", {"speaker_query": False}, "the vector leg without the query less the speaker it names"),
        ("+quota4", {"quota": 4}, "diversity: at most 4 turns of a thread in the page"),
        ("+thread-penalty", {"thread_penalty": 0.02}, "diversity, MMR-like: a thread's next turn costs 0.02"),
        ("+graph-expand", {"graph_expand": 20}, "documents linked to entities of the first 3 hits join"),
        ("+thread-expand", {"thread_expand": 2}, "two stages: every turn of the 2 best threads joins"),
        ("+thread-boost", {"thread_boost": 0.1}, "two stages: a turn gains 0.1 x its thread's score"),
        ("+prf", {"prf_terms": 10}, "RM3-like: full text also searches 10 terms of the first hits"),
        ("+rocchio", {"rocchio": 30}, "Rocchio: vectors search again toward the first hits (30 join)"),
        ("+preference", {"preference": 0.5}, "a trait question's speaker stating a preference (+0.5)"),
    ]
    plain = dataclasses.replace(base, fusion=dataclasses.replace(fusion, neighbour_weight=0.0), rerank=False)
    rows = [
        Row("keyword", "keyword", None, "full text alone (FTS5 OR'ed, bm25)"),
        Row("semantic", "semantic", None, "vectors alone"),
        Row("rrf", "hybrid", dataclasses.replace(base, method="rrf"), "hybrid, reciprocal rank fusion (before)"),
        Row("score-only", "hybrid", plain, "hybrid, score fusion alone"),
        Row("default", "hybrid", None, "search_universal as the MCP tool runs it"),
        Row("pieces", "hybrid", base, "the same rebuilt from the store's public pieces (bench/ablation.py)"),
        Row("mcp", "hybrid", None, "through the MCP tools over stdio (thread and at passed)"),
    ]
    for name, change, what in changes:
        rows.append(Row(name, "hybrid", dataclasses.replace(base, **change), what))
    return rows


def _dia(session: int, turn: int) -> str:
    return f"D{session}:{turn}"


def doc_id_of(dia_id: str) -> str:
    return "t-" + dia_id.lower().replace(":", "-")


def turns_of(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn with its normalised dia id, its session's date, its session and place in it."""
    conv = conversation["conversation"]
    keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    out = []
    for key in keys:
        date = str(conv.get(f"{key}_date_time", ""))
        for position, turn in enumerate(conv[key]):
            match = _EVIDENCE.search(str(turn["dia_id"]))
            if not match:
                continue
            dia = _dia(int(match.group(1)), int(match.group(2)))
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            out.append({"dia": dia, "date": date, "text": text, "thread": key, "pos": position})
    return out


def evidence_of(qa: dict[str, Any], known: set[str]) -> list[str]:
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


def score_list(gold: list[str], got: list[str | None]) -> tuple[float, float, float]:
    r5 = len(set(gold) & set(got[:5])) / len(gold)
    r10 = len(set(gold) & set(got[:10])) / len(gold)
    rr = next((1.0 / (i + 1) for i, dia in enumerate(got[:10]) if dia in gold), 0.0)
    return r5, r10, rr


Scores = dict[str, dict[int, dict[int, list[tuple[float, float, float]]]]]  # row → conv → category → rows


def run_conversations(
    data: list[dict[str, Any]],
    conv_indexes: list[int],
    config: RetrievalConfig,
    ask: Callable[[Store, str], dict[str, tuple[list[str], float]]],
    *,
    threads: bool = True,
    log: bool = True,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Ingest each conversation into a fresh store and score ``ask``'s rankings (row → doc ids, ms)."""
    scores: Scores = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    latency: dict[str, list[float]] = defaultdict(list)
    ingest_turns, ingest_seconds = 0, 0.0
    embedder = engine = "?"
    for index in conv_indexes:
        conversation = data[index]
        turns = turns_of(conversation)
        known = {t["dia"] for t in turns}
        with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
            folder = Path(tmp) / "dokoro"
            if cache is not None:
                # A store kept from an earlier run (tuning loops re-ask questions, not re-ingest).
                folder = cache / f"{config.embedder}-{config.vector_engine}-{int(threads)}" / str(index) / "dokoro"
            reuse = (folder / ".dokoro").is_dir()
            store = Store.open(folder, retrieval=config)
            if not reuse:
                ingest_seconds, ingest_turns = _ingest(store, turns, threads, ingest_seconds, ingest_turns)
            embedder = store.embedder.get().id if store.embedder.get() else "none"  # type: ignore[union-attr]
            engine = store.search.status().vector_engine_label
            store.search.universal("warm up", limit=10)  # load the model and caches outside the timings
            back = {doc_id_of(t["dia"]): t["dia"] for t in turns}
            for qa in conversation["qa"]:
                gold = evidence_of(qa, known)
                category = int(qa["category"])
                if not gold or category not in (1, 2, 3, 4):
                    continue
                for row, (doc_ids, ms) in ask(store, str(qa["question"])).items():
                    latency[row].append(ms)
                    if not row.endswith(" (cpu)"):
                        scores[row][index][category].append(score_list(gold, [back.get(d) for d in doc_ids]))
            store.close()
        if log:
            print(f"  {conversation['sample_id']}: {len(turns)} turns", file=sys.stderr)
    return {
        "scores": scores,
        "latency": latency,
        "ingest": ingest_turns / ingest_seconds if ingest_seconds else 0.0,
        "embedder": embedder,
        "engine": engine,
    }


def _ingest(store: Store, turns: list[dict[str, Any]], threads: bool, seconds: float, count: int) -> tuple[float, int]:
    started = time.perf_counter()
    store.docs.save_many(
        [
            NewDocument(
                doc_id_of(t["dia"]),
                t["text"],
                title=t["date"] or t["dia"],
                thread=t["thread"] if threads else None,
                thread_pos=t["pos"] if threads else None,
            )
            for t in turns
        ]
    )
    store.docs.index_docs([doc_id_of(t["dia"]) for t in turns])
    return seconds + time.perf_counter() - started, count + len(turns)


class Asker:
    """Asks each question of every row (each question starting at the next row), and counts the
    questions on which row ``pieces`` (the product rebuilt from its pieces) ranks as ``default`` does."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.asked = itertools.count()
        self.same = self.differ = 0

    def __call__(self, store: Store, question: str) -> dict[str, tuple[list[str], float]]:
        out = {}
        rows = self.rows
        # Each question starts at the next row: the first search of a question pays what the
        # others then find warm (its query's embedding, the pages it reads), so no row's latency
        # columns gain from always coming first or later.
        start = next(self.asked) % len(rows)
        for row in rows[start:] + rows[:start]:
            started, cpu = time.perf_counter(), time.process_time()
            if row.variant is None:
                hits = store.search.universal(question, limit=10, mode=row.mode).hits  # type: ignore[arg-type]
                found = [h.doc_id for h in hits]
            else:
                found = ranking(store, question, row.variant)
            wall, used = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
            out[row.name] = (found, wall)
            out[f"{row.name} (cpu)"] = (found, used)
        if "default" in out and "pieces" in out:
            if out["default"][0] == out["pieces"][0]:
                self.same += 1
            else:
                self.differ += 1
        return out


def _mean(rows: list[tuple[float, float, float]], i: int) -> float:
    return statistics.fmean(r[i] for r in rows) if rows else 0.0


def fold_rows(scores: Scores, row: str, fold: str) -> dict[int, list[tuple[float, float, float]]]:
    by_cat: dict[int, list[tuple[float, float, float]]] = defaultdict(list)
    for conv, cats in scores[row].items():
        if conv in FOLDS[fold]:
            for category, values in cats.items():
                by_cat[category] += values
    return by_cat


def overall(scores: Scores, row: str, fold: str) -> tuple[int, float, float, float]:
    every = [v for values in fold_rows(scores, row, fold).values() for v in values]
    return len(every), _mean(every, 0), _mean(every, 1), _mean(every, 2)


def report(outcome: dict[str, Any], rows: list[Row], folds: list[str]) -> str:
    scores: Scores = outcome["scores"]
    lines = [
        f"embedder: {outcome['embedder']}; vectors: {outcome['engine']}",
        f"ingest: {outcome['ingest']:.0f} turns/s (chunking, embedding and index writes included)",
        "",
        "Overall, categories 1-4 (R@5 / R@10 / MRR@10):",
        "",
        "| row | what | " + " | ".join(f"{f} (n)" for f in folds) + " | p50 ms | p95 ms | p95 cpu ms |",
        "|---|---|" + "---|" * len(folds) + "---|---|---|",
    ]
    for row in rows:
        cells = []
        for fold in folds:
            n, r5, r10, mrr = overall(scores, row.name, fold)
            cells.append(f"{r5:.3f} / **{r10:.3f}** / {mrr:.3f} ({n})")
        values = outcome["latency"][row.name]
        cpu = outcome["latency"].get(f"{row.name} (cpu)", [])
        lines.append(
            f"| {row.name} | {row.what} | "
            + " | ".join(cells)
            + f" | {percentile(values, 0.5):.1f} | {percentile(values, 0.95):.1f} | "
            + (f"{percentile(cpu, 0.95):.1f} |" if cpu else "- |")
        )
    lines += ["", "Per category (R@10 / MRR@10):", ""]
    header = "| row | fold | " + " | ".join(CATEGORIES[c] for c in (1, 2, 3, 4)) + " |"
    lines += [header, "|---|---|" + "---|" * 4]
    for row in rows:
        for fold in folds:
            by_cat = fold_rows(scores, row.name, fold)
            cells = [f"{_mean(by_cat.get(c, []), 1):.3f} / {_mean(by_cat.get(c, []), 2):.3f}" for c in (1, 2, 3, 4)]
            lines.append(f"| {row.name} | {fold} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_settings(pairs: list[str]) -> Variant:
    """The rows' base: the product's ranking with fusion settings changed (``key=value``)."""
    changes: dict[str, Any] = {}
    fields = {f.name: f for f in dataclasses.fields(FusionSettings)}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in fields:
            raise SystemExit(f"--set: unknown setting {key!r}; one of {', '.join(fields)}")
        kind = type(getattr(DEFAULT_FUSION, key))
        changes[key] = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
    return Variant(fusion=dataclasses.replace(DEFAULT_FUSION, **changes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA), help="Path of locomo-dev.json.")
    parser.add_argument("--embedder", default="auto", choices=["auto", "onnx", "static", "ollama", "hashing", "none"])
    parser.add_argument("--engine", default="auto", choices=["auto", "lancedb", "exact"])
    parser.add_argument("--folds", default="tune,report,all", help="Which folds to print (tune, report, all).")
    parser.add_argument("--rows", default="", help="Comma-separated rows to run (default: all).")
    parser.add_argument("--set", action="append", default=[], help="Override a fusion setting: key=value.")
    parser.add_argument("--store-cache", type=Path, default=None, help="Keep the stores here between runs.")
    parser.add_argument("--no-threads", action="store_true", help="Ingest turns without their session thread.")
    args = parser.parse_args()
    folds = args.folds.split(",")
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    convs = sorted({i for fold in folds for i in FOLDS[fold] if i < len(data)})
    rows = rows_for(parse_settings(args.set))
    if args.rows:
        wanted = args.rows.split(",")
        rows = [r for r in rows if r.name in wanted]
    config = RetrievalConfig(embedder=args.embedder, vector_engine=args.engine)
    in_process = [r for r in rows if r.name != "mcp"]
    outcome: dict[str, Any] = {
        "scores": defaultdict(dict),
        "latency": defaultdict(list),
        "ingest": 0.0,
        "embedder": args.embedder,
        "engine": "(server's)",
    }
    ask = Asker(in_process)
    if in_process:
        outcome = run_conversations(data, convs, config, ask, threads=not args.no_threads, cache=args.store_cache)
    if len(in_process) < len(rows):
        from locomo_mcp import run_mcp

        mcp = run_mcp(data, convs, "search", args.embedder)
        outcome["scores"]["mcp"] = mcp["scores"]["mcp"]
        outcome["latency"]["mcp"] = mcp["latency"]
        print(f"ingest through search_index_content over stdio: {mcp['ingest']:.0f} turns/s")
    print(report(outcome, rows, folds))
    if ask.same or ask.differ:
        print(f"\nrow pieces ranks as row default on {ask.same} of {ask.same + ask.differ} questions")
    if hasattr(os, "getloadavg"):
        print(f"\nload average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())} (2 cores)")


if __name__ == "__main__":
    main()
