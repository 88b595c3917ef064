"""Memories as markdown files: what the reconcile (rows ↔ ``memories/``) costs a call as memories grow.

Every memory call starts with a reconcile (``MemoryFiles.sync``). This script fills a store with N
memory rows (written straight to the table: the search index plays no part here), renders them
once, then times the reconcile in each situation a call meets:

- quiet: nothing changed (the stat gate: the folder times, the rolling sweep's window of files,
  one ``rev > mark`` query);
- a row changed elsewhere (another process or machine): one file rendered;
- a file saved by an editor that writes a new file (the type folder's time moves): that folder
  listed, the file read, a new version made;
- an in-place edit (the folder's time does not move): found by the rolling sweep, within
  ``N / sweep`` calls;
- a memory call's own reconcile when nothing changed (what every remember and recall pays);
- ``memory_status()`` (with its reconcile, and read only as the tool calls it) and ``remember()``.

Usage:

    uv run python bench/memory_files.py [--sizes 1000 10000] [--database-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from dokoro_store import Store
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.files.sync import DEFAULT_SWEEP
from sqlalchemy import text

TYPES = ("fact", "decision", "lesson", "rule", "preference", "reference", "episode")


def _ms(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), max(samples)


# A vocabulary large enough that two memories rarely read alike (the conflict gate then meets a
# realistic handful of neighbours, not every memory that shares a service).
VOCABULARY = [f"{stem}{n}" for stem in ("api", "cache", "queue", "token", "deploy", "schema") for n in range(500)]


def _fill(store: Store, n: int) -> None:
    """N memories of varied text, each about its own topic and one of 50 shared services."""
    rng = random.Random(7)
    now = store.clock.now()
    for start in range(0, n, 1000):
        rows = []
        for i in range(start, min(n, start + 1000)):
            words = " ".join(rng.choice(VOCABULARY) for _ in range(14))
            rows.append(
                MemoryRow(
                    id=f"mem_bench_{i:07d}",
                    type=TYPES[i % len(TYPES)],
                    title=f"Memory {i}: {' '.join(rng.choice(VOCABULARY) for _ in range(4))}",
                    body=f"Memory number {i} ({words}) ends with a timeout.",
                    entities=[f"topic-{i}", f"service-{rng.randrange(50)}"],
                    trust="imported",
                    state="active",
                    created_at=now - timedelta(minutes=i),
                    updated_at=now - timedelta(minutes=i),
                )
            )
        with store.db.write() as session:
            repository.create_many(session, rows)


def run(n: int, database_url: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "dokoro"
        retrieval = RetrievalConfig(embedder="none")
        with Store.open(root, database_url=database_url, retrieval=retrieval) as store:
            memories = store.memories
            started = time.perf_counter()
            _fill(store, n)
            fill_s = time.perf_counter() - started
            started = time.perf_counter()
            first = memories.sync_files()
            first_s = time.perf_counter() - started
            started = time.perf_counter()
            rest = memories.reindex_from_files()
            render_s = time.perf_counter() - started
            files = sum(1 for _ in (root / "memories").glob("*/*.md"))
            print(f"\n## {n} memories ({'PostgreSQL' if database_url else 'SQLite'})")
            print(
                f"- rows written: {fill_s:.1f} s; first call after them: {first_s:.1f} s ({first.rendered} files "
                f"rendered, {first_s / max(1, first.rendered) * 1000:.2f} ms/file); `memory reindex` renders "
                f"the rest: {render_s:.1f} s; {files} files on disk (rows without a file: {rest.rows_without_file})"
            )

            memories.remember(type="fact", title="Warm-up", body="Loads the index's libraries once.")
            quiet, quiet_max = _ms(memories.sync_files, 30)
            print(
                f"- quiet reconcile (nothing changed): median {quiet:.2f} ms, max {quiet_max:.2f} ms "
                f"(stats min({n}, {DEFAULT_SWEEP}) files per call)"
            )
            own, own_max = _ms(lambda: memories.sync_files(sweep=False), 30)
            print(
                f"- a memory call's own reconcile, quiet (the sweep's share; the files holding no memory; the "
                f"ledger when due): median {own:.2f} ms, max {own_max:.2f} ms"
            )
            read_only, _ = _ms(lambda: memories.status(reconcile=False), 5)
            print(f"- memory_status(reconcile=False) (the read-only tool's): median {read_only:.1f} ms")

            def changed_elsewhere() -> None:
                with store.db.write() as session:
                    session.execute(
                        text("UPDATE memories SET body = body || '.' WHERE id = :id"), {"id": "mem_bench_0000007"}
                    )

            samples = []
            for _ in range(10):
                changed_elsewhere()
                started = time.perf_counter()
                done = memories.sync_files()
                samples.append((time.perf_counter() - started) * 1000)
                assert done.rendered == 1, done
            print(f"- a row changed by another process: median {statistics.median(samples):.2f} ms (1 file rendered)")

            samples = []
            for k in range(5):
                path = next((root / "memories" / "fact").glob(f"mem_bench_{7 * (k + 1):07d}-*.md"))
                edited = path.read_text(encoding="utf-8").replace("timeout.", f"timeout, edited {k}.")
                tmp_path = path.with_name(f".{path.name}.tmp")
                tmp_path.write_text(edited, encoding="utf-8")
                tmp_path.replace(path)  # as editors that save a new file do: the folder's time moves
                started = time.perf_counter()
                done = memories.sync_files()
                samples.append((time.perf_counter() - started) * 1000)
                assert [c.action for c in done.changes] == ["new_version"], done
            folder = sum(1 for _ in (root / "memories" / "fact").glob("*.md"))
            print(
                f"- an editor's save (new file renamed over it): median {statistics.median(samples):.2f} ms "
                f"(lists the type folder: {folder} files; reads 1; makes the new version)"
            )

            path = next((root / "memories" / "decision").glob("mem_bench_*.md"))
            with path.open("r+", encoding="utf-8") as handle:
                content = handle.read().replace("timeout.", "timeout, edited in place.")
                handle.seek(0)
                handle.write(content)
                handle.truncate()
            calls, total = 0, 0.0
            while True:
                calls += 1
                started = time.perf_counter()
                done = memories.sync_files()
                total += (time.perf_counter() - started) * 1000
                if done.changes:
                    break
            print(
                f"- an in-place edit: found on call {calls} (window {DEFAULT_SWEEP} files per call), "
                f"{total / calls:.2f} ms per call meanwhile"
            )

            status, _ = _ms(memories.status, 5)
            print(f"- memory_status() (reconcile + counts in the database): median {status:.1f} ms")
            counter = iter(range(10**6))
            remember, _ = _ms(
                lambda: memories.remember(
                    type="fact", title=f"Bench {next(counter)}", body="A new memory during the benchmark."
                ),
                10,
            )
            print(f"- remember() (reconcile, store, index, gate, render its file): median {remember:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    for n in args.sizes:
        run(n, args.database_url)


if __name__ == "__main__":
    main()
