"""Moving in from the original dokoro: how long the first open of one of its stores takes.

Copies an original store folder (default: the fixture ``../shared/fixtures/original-store``) to a
temporary folder N times and opens each with ``Store.open``: the first open backs the store up,
converts and verifies it; the second is an ordinary open. Usage:

    uv run python bench/original_store.py [--store PATH] [--runs 5]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from dokoro_store import Store

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "original-store" / "dokoro"


def _copy(source: Path) -> Path:
    target = Path(tempfile.mkdtemp(prefix="dokoro-original-bench-")) / "dokoro"
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=FIXTURE, help="an original store folder (copied, never changed)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    logging.getLogger("dokoro").setLevel(logging.ERROR)
    first: list[float] = []
    converting: list[float] = []
    second: list[float] = []
    rows = 0
    for _ in range(args.runs):
        root = _copy(args.store)
        started = time.perf_counter()
        with Store.open(root) as store:
            first.append(time.perf_counter() - started)
            assert store.moved_in is not None
            converting.append(store.moved_in.seconds)
            rows = store.moved_in.imported
        started = time.perf_counter()
        with Store.open(root):
            second.append(time.perf_counter() - started)
        shutil.rmtree(root.parent)
    print(f"{rows} rows moved in; {args.runs} runs")
    print(f"first open (backup, conversion, verification): median {statistics.median(first):.2f} s")
    print(f"  of which the conversion: median {statistics.median(converting):.2f} s")
    print(f"second open: median {statistics.median(second) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
