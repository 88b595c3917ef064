"""Moving in from the MCP memory server: how long a large knowledge graph takes, and its peak memory.

Writes a synthetic ``memory.jsonl`` of about ``--mb`` megabytes (entities with a few observations
each, a tenth of their names in other scripts, then relations between them, as the server appends
them), then reads it and imports it into a fresh store (``dokoro migrate --from-mcp-memory``'s two
steps), then imports it again (a rerun: everything is there). Prints the time of each step, the
documents, entities and relations written, and the process's peak resident memory. Usage:

    uv run python bench/importers.py [--mb 49] [--database-url URL] [--embedder hashing]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

from dokoro_store import RetrievalConfig, Store, apply_import_set, preview_of, read_knowledge_graph

SCRIPTS = ["東京の会議室", "Москва проект", "서울 지사", "Αθήνα ομάδα", "القاهرة فريق"]
WORDS = [
    "cache",
    "login",
    "token",
    "service",
    "database",
    "queue",
    "deploy",
    "review",
    "release",
    "incident",
    "metric",
    "owner",
]
RELATIONS = ["works_at", "depends_on", "maintains", "uses", "owns", "reviews"]


def write_graph(path: Path, megabytes: float, seed: int = 7) -> tuple[int, int]:
    """A JSONL knowledge graph of about ``megabytes``: (entities, relations) written."""
    rng = random.Random(seed)
    target = int(megabytes * 1024 * 1024)
    names: list[str] = []
    relations = 0
    with path.open("w", encoding="utf-8") as out:
        written = 0
        # Entities take about four fifths of the file, relations the rest (as the server's files do).
        while written < target * 0.8:
            n = len(names)
            name = f"{rng.choice(SCRIPTS)} {n}" if n % 10 == 0 else f"{rng.choice(WORDS).title()}_{n}"
            names.append(name)
            observations = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) for _ in range(rng.randint(2, 5))
            ]
            line = json.dumps(
                {
                    "type": "entity",
                    "name": name,
                    "entityType": rng.choice(["person", "service", "project"]),
                    "observations": observations,
                },
                ensure_ascii=False,
            )
            out.write(line + "\n")
            written += len(line.encode("utf-8")) + 1
        while written < target:
            line = json.dumps(
                {
                    "type": "relation",
                    "from": rng.choice(names),
                    "to": rng.choice(names),
                    "relationType": rng.choice(RELATIONS),
                },
                ensure_ascii=False,
            )
            out.write(line + "\n")
            written += len(line.encode("utf-8")) + 1
            relations += 1
    return len(names), relations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=49.0, help="size of the synthetic JSONL file")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL URL (default: the folder's SQLite)")
    parser.add_argument("--embedder", default=None, help="e.g. hashing: the import without the model's cost")
    args = parser.parse_args()
    logging.getLogger("dokoro").setLevel(logging.ERROR)
    folder = Path(tempfile.mkdtemp(prefix="dokoro-import-bench-"))
    try:
        source = folder / "memory.jsonl"
        entities, relations = write_graph(source, args.mb)
        size = source.stat().st_size / 2**20
        print(f"{source.name}: {size:.1f} MB, {entities:,} entities, {relations:,} relations")
        started = time.perf_counter()
        items = read_knowledge_graph(source)
        read = time.perf_counter() - started
        print(f"read: {read:.1f} s ({len(items.notes):,} documents, {items.skipped_count} skipped)")
        retrieval = RetrievalConfig(embedder=args.embedder) if args.embedder else None
        with Store.open(folder / "dokoro", database_url=args.database_url, retrieval=retrieval) as store:
            started = time.perf_counter()
            preview = preview_of(store, items)
            print(f"preview: {time.perf_counter() - started:.1f} s ({preview.new:,} new)")
            started, cpu = time.perf_counter(), time.process_time()
            done = apply_import_set(store, items)
            took, used = time.perf_counter() - started, time.process_time() - cpu
            print(
                f"import: {took:.1f} s ({done.new / took:,.0f} documents/s; CPU {used:.1f} s, "
                f"{used / max(done.new, 1) * 1000:.1f} ms per document): {done.new:,} documents, "
                f"{done.entities:,} entities, {done.relations:,} relations recorded, {done.indexed:,} indexed"
            )
            started = time.perf_counter()
            again = apply_import_set(store, read_knowledge_graph(source))
            print(f"rerun: {time.perf_counter() - started:.1f} s ({again.unchanged:,} already there, {again.new} new)")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak resident memory of the process: {peak:.0f} MB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
