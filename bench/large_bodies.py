"""How long a large body takes to remember and to index: seconds per size, one word and prose.

``dokoro_remember`` indexes the body (full-text, trigram), extracts entities, redacts secrets and
searches for close memories (the conflict gate). Each step must grow linearly with the body: a
1 MB one-word body once took 18 s, its gate query a phrase of 2,000 characters matched against
the trigrams of the body itself. Usage:

    uv run python bench/large_bodies.py [--sizes 125000 250000 500000 1000000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dokoro_store import Store

BODIES = {
    "one word": lambda n: "a" * n,
    "prose": lambda n: ("the deploy of service api-gateway failed after config change " * (n // 62 + 1))[:n],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[125_000, 250_000, 500_000, 1_000_000])
    args = parser.parse_args()
    print(f"{'body':<10} {'characters':>10} {'remember s':>10} {'µs/char':>8} {'index s':>8} {'µs/char':>8}")
    for kind, make in BODIES.items():
        for size in args.sizes:
            body = make(size)
            with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder)) as store:
                store.memories.remember(type="fact", title="warm", body="warm up", agent_id="bench")
                started = time.perf_counter()
                store.memories.remember(type="fact", title=f"{kind} {size}", body=body, agent_id="bench")
                remembered = time.perf_counter() - started
                started = time.perf_counter()
                store.search.index_content("bench-doc", body, "Untitled")
                indexed = time.perf_counter() - started
            print(
                f"{kind:<10} {size:>10} {remembered:>10.2f} {remembered / size * 1e6:>8.2f} "
                f"{indexed:>8.2f} {indexed / size * 1e6:>8.2f}"
            )


if __name__ == "__main__":
    main()
