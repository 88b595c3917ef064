"""Fit the weights of the second-stage re-ranker (``dokoro_store.index.ranking.rerank``) on LoCoMo 0-3.

For every question of categories 1-4, the fused candidates are taken before the second stage
(``store.search.candidates``), the best ``--depth`` described by ``rerank.features`` and labelled by
the gold evidence. Each candidate's new score is its fused score plus a weighted sum of the
features. The weights are found by coordinate ascent (a grid per feature, several passes) that
maximises R@10 + MRR@10 over the questions it is given — a listwise objective: it scores the
ranking, not each candidate's label (a logistic regression on the same features, tried in the
first round, lowered R@10).

Honest tuning: the weights are fitted on conversations 0-3 (the tuning fold) only. Which features
to search is chosen by leaving one tuning conversation out (fit on three, score the fourth); the
report fold (4-6) is printed for the record, never used to choose. The script prints the weights
to paste into ``rerank.WEIGHTS``.

    uv run python bench/fit_reranker.py [--store-cache DIR] [--reuse] [--features a,b,c]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from dokoro_store import Store
from dokoro_store.index.ranking.rerank import FEATURES, RERANK_DEPTH, WEIGHTS, features
from dokoro_store.retrieval import RetrievalConfig
from locomo_retrieval import DATA, FOLDS, _ingest, doc_id_of, evidence_of, turns_of

# conversation, category, gold ids, question, planned query, candidates (Scored), their texts
Raw = tuple[int, int, list[str], str, Any, list[Any], dict[str, str]]
# conversation, gold ids, candidate ids, feature rows, fused scores
Question = tuple[int, list[str], list[str], Any, Any]

DUMP = Path(tempfile.gettempdir()) / "dokoro-fit-reranker-raw.pickle"
KEEP = 60  # candidates kept per question in the dump (the depth searched is at most this)


def collect(cache: Path | None) -> list[Raw]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    out: list[Raw] = []
    for index in FOLDS["all"]:
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
                    category = int(qa["category"])
                    if not gold or category not in (1, 2, 3, 4):
                        continue
                    question = str(qa["question"])
                    planned, candidates = store.search.candidates(question)
                    head = candidates[:KEEP]
                    texts = store.search.texts([c.doc_id for c in head])
                    out.append((index, category, [doc_id_of(g) for g in gold], question, planned, head, texts))
        print(f"  conversation {index}: {sum(1 for q in out if q[0] == index)} questions", file=sys.stderr)
    return out


def describe(raw: list[Raw], depth: int) -> list[Question]:
    out: list[Question] = []
    for conv, _cat, gold, question, planned, head, texts in raw:
        head = head[:depth]
        rows = np.asarray(features(planned, question, head, texts), dtype=np.float64).reshape(len(head), len(FEATURES))
        fused = np.asarray([c.score for c in head], dtype=np.float64)
        out.append((conv, gold, [c.doc_id for c in head], rows, fused))
    return out


GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


class Matrix:
    """The questions as padded arrays, so one evaluation of a weight vector is a few numpy calls."""

    def __init__(self, questions: list[Question]) -> None:
        depth = max((len(q[2]) for q in questions), default=1) or 1
        n = len(questions)
        self.rows = np.zeros((n, depth, len(FEATURES)))
        self.fused = np.full((n, depth), -1e9)
        self.gold = np.zeros((n, depth), dtype=bool)
        self.total = np.ones(n)
        for i, (_conv, gold, ids, rows, fused) in enumerate(questions):
            self.rows[i, : len(ids)] = rows
            self.fused[i, : len(ids)] = fused
            self.gold[i, : len(ids)] = [d in gold for d in ids]
            self.total[i] = len(gold)

    def evaluate(self, w: Any | None) -> tuple[float, float]:
        values = self.fused if w is None else self.fused + self.rows @ w
        # Stable order, best first; ties keep the fused order (as the search's sort by id nearly does).
        order = np.argsort(-values, axis=1, kind="stable")[:, :10]
        hit = np.take_along_axis(self.gold, order, axis=1)
        recall = hit.sum(axis=1) / self.total
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        rr = np.where(first >= 0, 1.0 / (np.maximum(first, 0) + 1.0), 0.0)
        return float(recall.mean()), float(rr.mean())


_MATRICES: dict[int, tuple[list[Question], Matrix]] = {}  # the list is held, so its id is never reused


def evaluate(questions: list[Question], w: Any | None) -> tuple[float, float]:
    key = id(questions)
    if key not in _MATRICES:
        _MATRICES[key] = (questions, Matrix(questions))
    return _MATRICES[key][1].evaluate(w)


def objective(found: tuple[float, float]) -> float:
    return found[0] + found[1]


def fit(questions: list[Question], searched: list[str], passes: int = 3, start: Any | None = None) -> Any:
    """Coordinate ascent over the grid (negative weights too), from ``start`` (None: all-zero weights,
    the fused order)."""
    w = np.zeros(len(FEATURES)) if start is None else np.asarray(start, dtype=np.float64).copy()
    best = objective(evaluate(questions, w))
    grid = sorted({*GRID, *(-g for g in GRID)})
    for _ in range(passes):
        improved = False
        for name in searched:
            i = FEATURES.index(name)
            for value in grid:
                trial = w.copy()
                trial[i] = value
                found = objective(evaluate(questions, trial))
                if found > best + 1e-9:
                    best, w, improved = found, trial, True
        if not improved:
            break
    return w


def loco(questions: list[Question], searched: list[str], start: Any | None = None) -> tuple[float, float]:
    """Leave one tuning conversation out: fit on three, score the fourth; weighted by questions."""
    held = []
    for conv in FOLDS["tune"]:
        train = [q for q in questions if q[0] != conv]
        test = [q for q in questions if q[0] == conv]
        held.append((len(test), *evaluate(test, fit(train, searched, start=start))))
    n = sum(h[0] for h in held)
    return sum(h[0] * h[1] for h in held) / n, sum(h[0] * h[2] for h in held) / n


def select(tune: list[Question], searched: list[str]) -> list[str]:
    """Backward elimination: drop the feature whose absence helps leaving one conversation out most."""
    best = objective(loco(tune, searched))
    while len(searched) > 1:
        trials = [(objective(loco(tune, [f for f in searched if f != name])), name) for name in searched]
        score, name = max(trials)
        if score <= best + 1e-9:
            break
        best, searched = score, [f for f in searched if f != name]
        print(f"  dropped {name}: LOCO R@10 + MRR {best:.3f}")
    return searched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store-cache", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="Reuse the candidates collected by the last run.")
    parser.add_argument(
        "--from-committed",
        action="store_true",
        help="Start the ascent from the committed WEIGHTS (fit only --features on top of them).",
    )
    parser.add_argument("--dump", type=Path, default=DUMP, help="Where the collected candidates are kept.")
    parser.add_argument("--depth", type=int, default=RERANK_DEPTH, help="Candidates re-ordered per question.")
    parser.add_argument("--features", default="", help="Comma-separated features to search (default: every one).")
    parser.add_argument("--ablate", action="store_true", help="Also fit with each feature left out (LOCO).")
    parser.add_argument(
        "--select", action="store_true", help="Drop features one at a time while leaving one out improves (LOCO)."
    )
    args = parser.parse_args()
    if args.reuse and args.dump.is_file():
        raw = pickle.loads(args.dump.read_bytes())
    else:
        raw = collect(args.store_cache)
        args.dump.write_bytes(pickle.dumps(raw))
    questions = describe(raw, args.depth)
    tune = [q for q in questions if q[0] in FOLDS["tune"]]
    held_out = [q for q in questions if q[0] in FOLDS["report"]]
    searched = args.features.split(",") if args.features else list(FEATURES)
    current = np.asarray(WEIGHTS)

    def line(label: str, w: Any | None) -> str:
        t, r = evaluate(tune, w), evaluate(held_out, w)
        return f"{label:<34} tune R@10 {t[0]:.3f} MRR {t[1]:.3f} | report R@10 {r[0]:.3f} MRR {r[1]:.3f}"

    print(f"depth {args.depth}; searched: {', '.join(searched)}")
    print(line("fused order (no second stage)", None))
    print(line("committed WEIGHTS", current))
    start = current if args.from_committed else None
    w = fit(tune, searched, start=start)
    print(line("fitted on the tuning fold", w))
    if start is not None:
        print("leave one conversation out (tune), committed: R@10 {:.3f} MRR {:.3f}".format(*loco(tune, [], start)))
    print("leave one conversation out (tune): R@10 {:.3f} MRR {:.3f}".format(*loco(tune, searched, start)))
    if args.ablate:
        for name in searched:
            rest = [f for f in searched if f != name]
            print(f"  without {name:<10} LOCO R@10 {{:.3f}} MRR {{:.3f}}".format(*loco(tune, rest)))
    if args.select:
        searched = select(tune, searched)
        w = fit(tune, searched)
        print(f"selected: {', '.join(searched)}")
        print(line("fitted on the selected features", w))
    print("WEIGHTS = (" + ", ".join(f"{v:.2f}" for v in w) + ")  # " + ", ".join(FEATURES))


if __name__ == "__main__":
    main()
