"""Entity graph: regex extraction speed, persisting extractions, and traversal latency.

Builds a synthetic project graph (documents naming files, services, components and people with
relation triggers), then times a depth-1…5 traversal from a hub entity, with and without time
travel, and the graph signal of search. Usage:

    uv run python bench/graph.py [--docs 2000] [--database-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.graph.extraction import extract_regex

SERVICES = ["redis", "postgres", "kafka", "nginx", "docker", "stripe", "sentry", "grafana"]
VERBS = ["uses", "depends on", "requires", "implements", "blocks", "was replaced by"]


def _doc(rng: random.Random, i: int) -> str:
    lines = [f"# Note {i}", ""]
    for _ in range(8):
        module = f"src/mod{rng.randrange(400)}/file{rng.randrange(5)}.ts"
        component = f"Widget{rng.randrange(300)}Manager"
        target = rng.choice(
            [rng.choice(SERVICES), f"Widget{rng.randrange(300)}Manager", f"lib-{rng.randrange(200)}-core"]
        )
        lines.append(f"{module} {rng.choice(VERBS)} {target}. {component} was written by @dev{rng.randrange(40)}.")
        lines.append("Some prose about the change, the tests, and the rollout plan for the #release.")
    lines += ["```ts", "import x from './ignored/in/code.ts'", "```"]
    return "\n".join(lines)


def _timed(fn, runs: int = 30) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), max(samples)


def main(docs: int, database_url: str | None) -> None:
    rng = random.Random(7)
    texts = [_doc(rng, i) for i in range(docs)]
    chars = sum(len(t) for t in texts)

    started = time.perf_counter()
    extractions = [extract_regex(t) for t in texts]
    extract_s = time.perf_counter() - started
    print(
        f"regex extraction: {docs} docs, {chars / 1e6:.2f} M chars in {extract_s:.2f} s "
        f"({chars / extract_s / 1e6:.2f} M chars/s, {extract_s / docs * 1000:.2f} ms/doc)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        retrieval = RetrievalConfig(embedder="none")
        with Store.open(Path(tmp) / "dokoro", database_url=database_url, retrieval=retrieval) as store:
            started = time.perf_counter()
            for i, extraction in enumerate(extractions):
                store.graph.persist(f"doc-{i}", extraction)
            persist_s = time.perf_counter() - started
            stats = store.graph.stats()
            print(
                f"persist: {docs} docs in {persist_s:.2f} s ({persist_s / docs * 1000:.2f} ms/doc, 1 transaction each)"
                f" -> {stats.entities} entities, {stats.relations} relations ({stats.open_relations} open)"
            )

            hub = max(store.graph.search(entity_type="service", limit=100).hits, key=lambda h: h.doc_count or 0)
            as_of = store.clock.now()
            for depth in (1, 2, 3, 5):
                median, worst = _timed(lambda d=depth: store.graph.traverse(int(hub.id), depth=d))
                walk = store.graph.traverse(int(hub.id), depth=depth)
                t_median, _ = _timed(lambda d=depth: store.graph.traverse(int(hub.id), depth=d, as_of=as_of))
                print(
                    f"traverse from {hub.name!r} depth {depth}: {walk.visited} entities reached, "
                    f"median {median:.1f} ms (max {worst:.1f}); with as_of {t_median:.1f} ms"
                )
            median, worst = _timed(lambda: store.graph.search_signal("why does redis block Widget12Manager", 40))
            print(f"graph signal for a query naming 2 entities: median {median:.1f} ms (max {worst:.1f})")
            median, worst = _timed(lambda: store.graph.search("widget", limit=20))
            print(f"entity search 'widget': median {median:.1f} ms (max {worst:.1f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    main(args.docs, args.database_url)
