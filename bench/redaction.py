"""What secret redaction costs: throughput of :func:`dokoro_store.walls.secrets.redact` on ordinary and
hostile text, and of the database hook on a note write.

Every string any write statement carries passes through ``redact`` (``db/redaction.py``), so its
speed is a floor under every write. The hostile inputs are the shapes that make a careless
pattern backtrack (a megabyte of one word, of separators, of repeated prefixes); each must stay
linear. Usage:

    uv run python bench/redaction.py [--mb 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dokoro_store import Store
from dokoro_store.walls import secrets
from dokoro_store.walls.secrets import redact

PROSE = (
    "Fixed the race in auth/session.ts; the token refresh now runs every 5 min. See commit "
    "3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a and https://example.org/docs/auth for the flow. "
)
SECRETS = "deploy with ghp_" + "Zq8Wm3" * 6 + " and DB_PASSWORD=Tr0ub4dor-3x, postgresql://app:pw12345@db/prod. "


def inputs(size: int) -> dict[str, str]:
    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    return {
        "prose": fill(PROSE),
        "prose + secrets (1 in 10 lines)": fill(PROSE * 9 + SECRETS),
        "one 1 MB word": "a" * size,
        "x-x-x-…": fill("x-"),
        "password=password=…": fill("password="),
        "https://https://…": fill("https://"),
        "BEGIN PRIVATE KEY ×N, no END": fill("-----BEGIN PRIVATE KEY-----"),
        "DB_PASSWORD=<1 MB value>": "DB_PASSWORD=" + "x" * size,
    }


def cold(text: str) -> None:
    """One scan of ``text`` with the cache of known-clean texts emptied (a first write)."""
    secrets._CLEAN.__init__()  # type: ignore[misc]
    redact(text)


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    print(f"redact() on {args.mb:g} MB, best of {args.repeat}")
    for name, text in inputs(size).items():
        seconds = timed(lambda text=text: cold(text), args.repeat)
        print(f"  {name:<34} {seconds * 1000:8.0f} ms  {len(text) / seconds / 1e6:6.1f} MB/s")
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "s") as store:
        notes = store.coord.notes
        plain = timed(lambda: [notes.append("bench", PROSE) for _ in range(200)], args.repeat)
        secret = timed(lambda: [notes.append("bench", SECRETS) for _ in range(200)], args.repeat)
        print(
            f"shared note append (SQLite, hook included): {plain / 200 * 1000:.2f} ms plain, "
            f"{secret / 200 * 1000:.2f} ms with secrets"
        )


if __name__ == "__main__":
    main()
