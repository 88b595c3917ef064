"""Fit the weights of the second-stage re-ranker (``dokoro_store.retrieval.rerank``) on LoCoMo 0-3.

For every question of categories 1-4 of the tuning conversations (0-3 only: never the report fold),
the fused candidates are taken before the second stage (``store.search.candidates``), the best
``RERANK_DEPTH`` described by ``rerank.features``, and labelled 1 when they are gold evidence.
A logistic regression (plain gradient descent, L2) is fitted; the script prints the weights to paste
into ``rerank.WEIGHTS`` and the tuning fold's R@10 / MRR@10 before and after, with a leave-one-
conversation-out estimate so the fit's gain is not only in-sample.

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

Question = tuple[int, list[str], list[str], Any]  # conversation, gold doc ids, candidate ids, feature rows


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
                    out.append((index, [doc_id_of(g) for g in gold], [c.doc_id for c in head], rows))
        print(f"  conversation {index}: {sum(1 for q in out if q[0] == index)} questions", file=sys.stderr)
    return out


def fit(questions: list[Question], l2: float = 1e-3, steps: int = 3000, rate: float = 0.5) -> Any:
    x = np.vstack([np.hstack([np.ones((len(q[2]), 1)), q[3]]) for q in questions if len(q[2])])
    y = np.concatenate([[1.0 if d in q[1] else 0.0 for d in q[2]] for q in questions if len(q[2])])
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w -= rate * (x.T @ (p - y) / len(y) + l2 * np.r_[0.0, w[1:]])
    return w


def evaluate(questions: list[Question], w: Any | None) -> tuple[float, float]:
    r10, mrr = [], []
    for _conv, gold, ids, rows in questions:
        order = list(range(len(ids)))
        if w is not None and len(ids):
            values = np.hstack([np.ones((len(ids), 1)), rows]) @ w
            order = sorted(order, key=lambda i: -values[i])
        got = [ids[i] for i in order]
        _r5, r, rr = score_list(gold, got)  # type: ignore[arg-type]
        r10.append(r)
        mrr.append(rr)
    return float(np.mean(r10)), float(np.mean(mrr))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store-cache", type=Path, default=None)
    args = parser.parse_args()
    questions = collect(args.store_cache)
    print("fused order (no second stage): R@10 {:.3f} MRR@10 {:.3f}".format(*evaluate(questions, None)))
    w = fit(questions)
    print("fitted, in sample:              R@10 {:.3f} MRR@10 {:.3f}".format(*evaluate(questions, w)))
    held = []
    for conv in FOLDS["tune"]:
        train = [q for q in questions if q[0] != conv]
        test = [q for q in questions if q[0] == conv]
        held.append((len(test), *evaluate(test, fit(train))))
    n = sum(h[0] for h in held)
    print(
        f"leave one conversation out:     R@10 {sum(h[0] * h[1] for h in held) / n:.3f} MRR@10 {sum(h[0] * h[2] for h in held) / n:.3f}"
    )
    print("WEIGHTS = (" + ", ".join(f"{v:.3f}" for v in w) + ")  # bias, " + ", ".join(FEATURES))


if __name__ == "__main__":
    main()
