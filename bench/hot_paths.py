"""The lean hot paths (issue 45.2), before and after, in one run: the store's services timed in-process.

Each round runs one child process per tree (``--before DIR``: a ``git archive`` tree compiled with
``python -m compileall -q DIR``, whose ``src`` folders go first on PYTHONPATH; ``--after DIR``,
default this checkout), the order rotated. A child opens a fresh store (SQLite in a temporary
folder), seeds it (``--questions`` questions,
``--claims`` file claims held by 4 agents with presence), warms each path up and times ``--calls``
calls of each:

- ``question_list``: ``working.questions.list("all")`` (what dokoro_question_list runs);
- ``question_counts``: ``working.questions.counts()`` (dokoro_question_check and every add/answer);
- ``claim_list``: ``coord.claims.list(include_expired=True)`` (dokoro_claim_list);
- ``index_content``: ``search.index_content`` of a new 400-character text (search_index_content),
  full text only (``embedder="none"``), so the figure is the write path and not an embedder.

Figures are per-call medians of each child (µs) and their median over the rounds; the ratio is
after / before in the same run. This is the store below the MCP layer: ``bench/floor.py`` measures
a whole tool call against a bare SDK server.

    uv run python bench/hot_paths.py --before DIR [--rounds 5] [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PATHS = ("question_list", "question_counts", "claim_list", "index_content")
_SRC = ("shared/dokoro-store/src",)


def _child(calls: int, questions: int, claims: int) -> dict[str, float]:
    from dokoro_store import Store
    from dokoro_store.index.config import RetrievalConfig

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "dokoro"
        with Store.open(root, retrieval=RetrievalConfig(embedder="none")) as store:
            for i in range(questions):
                priority = ("low", "medium", "high", "blocker")[i % 4]
                store.working.questions.add(f"Question {i} about the refresh race?", priority=priority)
            agents = [f"agent-{n}" for n in range(4)]
            for agent in agents[:3]:
                store.coord.presence.ping(agent)
            for i in range(claims):
                store.coord.claims.claim([f"src/module_{i}.py"], agents[i % 4], root=folder, ttl_seconds=3600)
            text = "The session refresh worker races the login tab; a timeout fixes it. " * 6
            counter = iter(range(10**9))
            work: dict[str, Callable[[], object]] = {
                "question_list": lambda: store.working.questions.list("all"),
                "question_counts": store.working.questions.counts,
                "claim_list": lambda: store.coord.claims.list(include_expired=True),
                "index_content": lambda: store.search.index_content(f"note-{next(counter)}", text, "A note"),
            }
            figures: dict[str, float] = {}
            for name in PATHS:
                call = work[name]
                for _ in range(20):
                    call()
                times = []
                for _ in range(calls):
                    start = time.perf_counter_ns()
                    call()
                    times.append(time.perf_counter_ns() - start)
                figures[name] = statistics.median(times) / 1000
            return figures


def _run_tree(tree: Path | None, args: argparse.Namespace) -> dict[str, float]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([*(str(tree / src) for src in _SRC), env.get("PYTHONPATH", "")])
    command = [sys.executable, __file__, "--child", "--calls", str(args.calls)]
    command += ["--questions", str(args.questions), "--claims", str(args.claims)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=False)
    parser.add_argument("--after", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--claims", type=int, default=40)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.calls, args.questions, args.claims)))
        return
    targets: list[tuple[str, Path | None]] = [("after", args.after)]
    if args.before is not None:
        targets.insert(0, ("before", args.before))
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in targets}
    for round_ in range(args.rounds):
        order = targets[round_ % len(targets) :] + targets[: round_ % len(targets)]
        for name, tree in order:
            results[name].append(_run_tree(tree, args))
    load = os.getloadavg()
    print(f"rounds {args.rounds}, {args.calls} calls each, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    medians = {name: {p: statistics.median(r[p] for r in runs) for p in PATHS} for name, runs in results.items()}
    header = "| path | " + " | ".join(f"{name} µs" for name, _ in targets)
    print(header + (" | after / before |" if "before" in medians else " |"))
    print("|---" * (len(targets) + 1 + ("before" in medians)) + "|")
    for path in PATHS:
        cells = [f"{medians[name][path]:.0f}" for name, _ in targets]
        ratio = f" | {medians['after'][path] / medians['before'][path]:.2f}" if "before" in medians else ""
        print(f"| `{path}` | " + " | ".join(cells) + ratio + " |")


if __name__ == "__main__":
    main()
