"""What a search costs right after a write on the exact vector engine (no LanceDB, no pgvector,
or ``vector_engine="exact"``): milliseconds of the search that follows each one-document write,
and the chunk rows it read, at a store of N chunks.

"no write" is a search with nothing written since the last (the floor: the scan itself);
"caught up" is the engine as it is: the search reads the rows written since its last look
(``chunks.rev``, ``index_drops``). "read again" is what it did before migration 0030: every
write moved the index generation and the next search read every vector again (reproduced by
clearing the engine's rows before each search). Usage:

    uv run python bench/exact_after_write.py [--chunks 20000] [--writes 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from dokoro_store import Store
from dokoro_store.index.vectors.index import ExactScanIndex
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.documents.service import NewDocument

WORDS = [f"w{i}" for i in range(5_000)]
# (label, write before each search, clear the engine's rows before each search)
MODES = (("no write (floor)", False, False), ("caught up", True, False), ("read again (before)", True, True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--writes", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        config = RetrievalConfig(embedder="hashing", vector_engine="exact")
        with Store.open(Path(tmp) / "store", retrieval=config) as store:
            docs = [NewDocument(id=f"d{i}", content=" ".join(rng.sample(WORDS, 12))) for i in range(args.chunks)]
            store.docs.save_many(docs)
            store.docs.index_docs()
            engine = store.docs.vector_index()
            assert isinstance(engine, ExactScanIndex)
            embedder = store.embedder.get()
            print(f"{args.chunks:,} chunks, {args.writes} writes each; ms of the search after a write (median / max)")
            for label, write, clear in MODES:
                engine.search(embedder.embed(["w1"], query=True)[0], embedder.id, 10)
                times, rows = [], []
                for n in range(args.writes):
                    text = " ".join(rng.sample(WORDS, 12)) if write else docs[n].content
                    if write:
                        store.docs.index_content(f"new-{label}-{n}", text)
                    vector = embedder.embed([text], query=True)[0]
                    if clear:
                        engine.clear()
                    before = engine.rows_read
                    start = time.perf_counter()
                    hits = engine.search(vector, embedder.id, 10)
                    times.append((time.perf_counter() - start) * 1000)
                    rows.append(engine.rows_read - before)
                    assert hits[0].doc_id == (f"new-{label}-{n}" if write else docs[n].id)
                print(
                    f"  {label:20} {statistics.median(times):7.2f} / {max(times):7.2f} ms"
                    f"   rows read per search: {statistics.median(rows):,.0f}"
                )


if __name__ == "__main__":
    main()
