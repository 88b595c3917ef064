"""How long a large body takes to remember: seconds per size, for a one-word body and for prose.

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
    print(f"{'body':<10} {'characters':>10} {'seconds':>8} {'µs/char':>8}")
    for kind, make in BODIES.items():
        for size in args.sizes:
            with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder)) as store:
                store.memories.remember(type="fact", title="warm", body="warm up", agent_id="bench")
                started = time.perf_counter()
                store.memories.remember(type="fact", title=f"{kind} {size}", body=make(size), agent_id="bench")
                took = time.perf_counter() - started
            print(f"{kind:<10} {size:>10} {took:>8.2f} {took / size * 1e6:>8.2f}")


if __name__ == "__main__":
    main()
