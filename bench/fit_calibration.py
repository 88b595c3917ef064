"""Fit the calibrated relevance of search hits on LoCoMo's tune fold; measure it on the report fold.

Every question of categories 1-4 is asked through ``store.search.ranked`` (what ``search_universal``
and ``dokoro_recall`` rank with), top 10, in one store per conversation built as
``bench/locomo_retrieval.py`` builds it (turns in their session's thread). Each hit is one example:
its relevance features (:mod:`dokoro_store.index.ranking.calibration`) and whether it is a gold evidence
turn of the question. A logistic regression (L2 ``--l2``) is fitted on the tune fold (conversations
0-3) only; the report fold (4-6) measures the calibration: reliability by bins of predicted
relevance, expected calibration error (ECE), Brier score. ``--mismatched`` also asks each
conversation's questions of the next conversation's store (nothing there is evidence): how often
the best hit still passes :data:`~dokoro_store.index.ranking.calibration.CLOSE_MATCH`.

    uv run python bench/fit_calibration.py [--embedder auto|onnx|static|none] [--store-cache DIR]

Prints the fitted coefficients (paste them into ``calibration.COEFFICIENTS``) and the tables for
the committed coefficients and the fitted ones.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from dokoro_store import Store
from dokoro_store.index.ranking.calibration import CLOSE_MATCH, COEFFICIENTS, FEATURES, family_of, relevance
from dokoro_store.retrieval import RetrievalConfig
from locomo_retrieval import DATA, FOLDS, _ingest, doc_id_of, evidence_of, turns_of

Example = tuple[list[float], int, int, int, bool]  # features, label, conversation, question, mismatched


def collect(
    data: list[dict[str, Any]], convs: list[int], config: RetrievalConfig, cache: Path | None, mismatched: bool
):
    examples: list[Example] = []
    family = "text"
    for index in convs:
        turns = turns_of(data[index])
        known = {t["dia"] for t in turns}
        back = {doc_id_of(t["dia"]): t["dia"] for t in turns}
        with tempfile.TemporaryDirectory(prefix="calib-") as tmp:
            folder = Path(tmp) / "dokoro"
            if cache is not None:
                folder = cache / f"{config.embedder}-{config.vector_engine}-1" / str(index) / "dokoro"
            reuse = (folder / ".dokoro").is_dir()
            with Store.open(folder, retrieval=config) as store:
                if not reuse:
                    _ingest(store, turns, True, 0.0, 0)
                embedder = store.embedder.get()
                family = family_of(embedder.id if embedder is not None else None)
                asked = [(index, data[index]["qa"], False)]
                if mismatched:
                    other = convs[(convs.index(index) + 1) % len(convs)]
                    asked.append((other, data[other]["qa"], True))
                for _source, qas, foreign in asked:
                    for q, qa in enumerate(qas):
                        gold = set(evidence_of(qa, known)) if not foreign else set()
                        if int(qa.get("category", 0)) not in (1, 2, 3, 4) or (not foreign and not gold):
                            continue
                        ranked = store.search.ranked(str(qa["question"]), limit=10)
                        for fused in ranked.top:
                            label = int(back.get(fused.key) in gold)
                            examples.append((ranked.features[fused.key], label, index, q, foreign))
        print(f"  {data[index]['sample_id']}: {len(turns)} turns", file=sys.stderr)
    return examples, family


def fit(rows: np.ndarray, labels: np.ndarray, l2: float, weights: np.ndarray | None = None) -> np.ndarray:
    """Logistic regression by Newton's method (intercept unpenalised; ``weights`` per example)."""
    x = np.hstack([np.ones((len(rows), 1)), rows])
    c = np.ones(len(rows)) if weights is None else weights
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2 * float(c.sum()))
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (c * (p - labels)) + penalty * w
        hessian = (x * (c * p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def table(name: str, predicted: np.ndarray, labels: np.ndarray) -> list[str]:
    bins = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0001]
    lines = [
        f"{name}: {len(labels)} hits, {labels.mean():.3f} relevant",
        "",
        "| predicted | hits | mean predicted | observed |",
    ]
    lines.append("|---|---|---|---|")
    ece = 0.0
    for low, high in itertools.pairwise(bins):
        mask = (predicted >= low) & (predicted < high)
        if not mask.any():
            continue
        mean_p, observed = float(predicted[mask].mean()), float(labels[mask].mean())
        ece += mask.sum() / len(labels) * abs(mean_p - observed)
        lines.append(f"| {low:.2f}-{min(high, 1.0):.2f} | {int(mask.sum())} | {mean_p:.3f} | {observed:.3f} |")
    brier = float(np.mean((predicted - labels) ** 2))
    lines += ["", f"ECE {ece:.4f}, Brier {brier:.4f}", ""]
    return lines


def best_per_question(examples: list[Example], predicted: np.ndarray) -> dict[tuple[int, int, bool], tuple[float, int]]:
    best: dict[tuple[int, int, bool], tuple[float, int]] = {}
    for (_row, label, conv, q, foreign), p in zip(examples, predicted, strict=True):
        key = (conv, q, foreign)
        old_p, any_gold = best.get(key, (0.0, 0))
        best[key] = (max(old_p, float(p)), max(any_gold, label))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="auto", choices=["auto", "onnx", "static", "hashing", "none"])
    parser.add_argument("--store-cache", type=Path, default=None)
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--mismatched", action="store_true", help="Also ask each conversation's questions elsewhere.")
    parser.add_argument(
        "--train-mismatched",
        type=float,
        default=0.0,
        help="Weight of the tune fold's questions asked of another conversation (all irrelevant) in the fit.",
    )
    parser.add_argument("--examples", type=Path, default=None, help="Keep the examples here (JSON) and reuse them.")
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    config = RetrievalConfig(embedder=args.embedder)
    if args.examples is not None and args.examples.is_file():
        kept = json.loads(args.examples.read_text(encoding="utf-8"))
        examples, family = [tuple(e) for e in kept["examples"]], kept["family"]
    else:
        examples, family = collect(data, list(FOLDS["all"]), config, args.store_cache, args.mismatched)
        if args.examples is not None:
            args.examples.write_text(json.dumps({"family": family, "examples": examples}), encoding="utf-8")
    rows = np.array([e[0] for e in examples])
    labels = np.array([e[1] for e in examples], dtype=float)
    tune = np.array([e[2] in FOLDS["tune"] and not e[4] for e in examples])
    report = np.array([e[2] in FOLDS["report"] and not e[4] for e in examples])
    fitting = rows.copy()
    foreign_tune = np.array([e[2] in FOLDS["tune"] and e[4] for e in examples])
    train = tune | (foreign_tune if args.train_mismatched > 0 else np.zeros(len(examples), dtype=bool))
    example_weights = np.where(foreign_tune, args.train_mismatched, 1.0)[train]
    weights = fit(fitting[train], labels[train], args.l2, example_weights)
    print(f"family {family}; features {', '.join(FEATURES)}")
    print(f'    "{family}": ({", ".join(f"{w:.3f}" for w in weights)}),')
    print()
    for label, coefficients in (("committed", COEFFICIENTS[family]), ("fitted", tuple(weights))):
        if len(coefficients) != len(FEATURES) + 1:
            continue  # committed before the features changed
        predicted = np.array([relevance(e[0], family, coefficients) for e in examples])
        print(f"## {label} coefficients")
        print()
        for fold, mask in (("tune", tune), ("report", report)):
            print("\n".join(table(f"{fold} fold", predicted[mask], labels[mask])))
        best = best_per_question(examples, predicted)
        for fold in ("tune", "report"):
            own = [v for k, v in best.items() if k[0] in FOLDS[fold] and not k[2]]
            found = [p for p, g in own if g]
            missed = [p for p, g in own if not g]
            print(
                f"{fold}: questions whose top 10 holds evidence: best relevance ≥ {CLOSE_MATCH} in "
                f"{np.mean([p >= CLOSE_MATCH for p in found]):.3f} of {len(found)}; questions with none: "
                f"{np.mean([p >= CLOSE_MATCH for p in missed]) if missed else float('nan'):.3f} of {len(missed)}"
            )
        foreign = [p for (conv, _q, f), (p, _g) in best.items() if f]
        if foreign:
            print(
                f"questions asked of another conversation: best relevance ≥ {CLOSE_MATCH} in "
                f"{np.mean([p >= CLOSE_MATCH for p in foreign]):.3f} of {len(foreign)} "
                f"(median best {np.median(foreign):.3f})"
            )
        print()
    if hasattr(os, "getloadavg"):
        print(f"load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())} (2 cores)")


if __name__ == "__main__":
    main()
