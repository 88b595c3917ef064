"""Fit the weights of the second-stage re-ranker (``dokoro_store.retrieval.rerank``) on LoCoMo 0-3.

For every question of categories 1-4 of the tuning conversations (0-3 only: never the report fold),
the fused candidates are taken before the second stage (``store.search.candidates``), the best
``RERANK_DEPTH`` described by ``rerank.features``, and labelled 1 when they are gold evidence.
Each candidate's new score is its fused score plus a weighted sum of the features; the weights are
found by a grid search that maximises R@10 (then MRR@10) over the tuning fold. The script prints the
weights to paste into ``rerank.WEIGHTS`` and the tuning fold's R@10 / MRR@10 before and after, with
a leave-one-conversation-out estimate so the gain is not only in-sample. (A logistic regression on
the same features, tried first, lowered R@10: it fits labels, not the ranking.)

    uv run python bench/fit_reranker.py [--store-cache DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.retrieval.fusion import DEFAULT_FUSION
from dokoro_store.retrieval.rerank import FEATURES, RERANK_DEPTH, features
from locomo_retrieval import DATA, FOLDS, _ingest, doc_id_of, evidence_of, score_list, turns_of

Question = tuple[int, list[str], list[str], Any, Any]  # conversation, gold ids, candidate ids, features, fused


def collect(cache: Path | None) -> list[Question]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    fusion = dataclasses.replace(DEFAULT_FUSION, rerank=False)
    out: list[Question] = []
    for index in FOLDS["tune"]:
        turns = turns_of(data[index])
        known = {t["dia"] for t in turns}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "dokoro"
            if cache is not None:
                folder = cache / "auto-auto-1" / str(index) / "dokoro"
            reuse = (folder / ".dokoro").is_dir()
            with Store.open(folder, retrieval=RetrievalConfig()) as store:
                if not reuse:
                    _ingest(store, turns, True, 0.0, 0)
                for qa in data[index]["qa"]:
                    gold = evidence_of(qa, known)
                    if not gold or int(qa["category"]) not in (1, 2, 3, 4):
                        continue
                    question = str(qa["question"])
                    planned, candidates = store.search.candidates(question, fusion)
                    head = candidates[:RERANK_DEPTH]
                    texts = store.search._texts([c.doc_id for c in head])
                    rows = np.asarray(features(planned, question, head, texts), dtype=np.float64)
                    fused = np.asarray([c.score for c in head], dtype=np.float64)
                    out.append((index, [doc_id_of(g) for g in gold], [c.doc_id for c in head], rows, fused))
        print(f"  conversation {index}: {sum(1 for q in out if q[0] == index)} questions", file=sys.stderr)
    return out


GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
SEARCHED = ("static", "coverage", "lift", "text", "vector")  # the features whose weight is searched (others stay 0)


def evaluate(questions: list[Question], w: Any | None) -> tuple[float, float]:
    r10, mrr = [], []
    for _conv, gold, ids, rows, fused in questions:
        order = list(range(len(ids)))
        if w is not None and len(ids):
            values = fused + rows @ w
            order = sorted(order, key=lambda i: -values[i])
        _r5, r, rr = score_list(gold, [ids[i] for i in order])  # type: ignore[arg-type]
        r10.append(r)
        mrr.append(rr)
    return float(np.mean(r10)), float(np.mean(mrr))


def fit(questions: list[Question]) -> Any:
    """Coordinate ascent over the grid, two passes, from all-zero weights (= the fused order)."""
    w = np.zeros(len(FEATURES))
    best = evaluate(questions, w)
    for _ in range(2):
        for name in SEARCHED:
            i = FEATURES.index(name)
            for value in GRID:
                trial = w.copy()
                trial[i] = value
                found = evaluate(questions, trial)
                if found > best:
                    best, w = found, trial
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store-cache", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="Reuse the candidates collected by the last run.")
    args = parser.parse_args()
    import pickle

    dump = Path(tempfile.gettempdir()) / "dokoro-fit-reranker.pickle"
    if args.reuse and dump.is_file():
        questions = pickle.loads(dump.read_bytes())
    else:
        questions = collect(args.store_cache)
        dump.write_bytes(pickle.dumps(questions))
    print("fused order (no second stage): R@10 {:.3f} MRR@10 {:.3f}".format(*evaluate(questions, None)))
    w = fit(questions)
    print("fitted, in sample:              R@10 {:.3f} MRR@10 {:.3f}".format(*evaluate(questions, w)))
    held = []
    for conv in FOLDS["tune"]:
        train = [q for q in questions if q[0] != conv]
        test = [q for q in questions if q[0] == conv]
        held.append((len(test), *evaluate(test, fit(train))))
    n = sum(h[0] for h in held)
    held_r10 = sum(h[0] * h[1] for h in held) / n
    held_mrr = sum(h[0] * h[2] for h in held) / n
    print(f"leave one conversation out:     R@10 {held_r10:.3f} MRR@10 {held_mrr:.3f}")
    print("WEIGHTS = (" + ", ".join(f"{v:.2f}" for v in w) + ")  # " + ", ".join(FEATURES))


if __name__ == "__main__":
    main()
