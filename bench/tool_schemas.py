"""What the tool-schema cache saves a start: CPU of registering a server's tools, cached or built.

Each measurement is a fresh process that imports a server's packages, builds the server
(``build_server``) and registers its tools either from the schema cache a previous start wrote
(``ToolCache``: fingerprint, read, listings) or by building every tool's schemas (argument model,
input and output JSON schemas), then lists them; printed are the medians of ``--runs`` processes
of the CPU (``time.process_time``) of the import, of the registration and of ``list_tools``.
``--before DIR`` / ``--after DIR`` run the same from other checkouts' sources (``DIR`` holds
``shared/``, ``servers/`` and ``packages/``, e.g. ``git archive main``), alternated. The stdio start
as a whole is ``bench/startup.py``; this isolates the part the cache is for. Usage:

    uv run python bench/tool_schemas.py [--runs 5] [--before DIR] [--after DIR]
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
from pathlib import Path


def _child(mode: str, name: str, cache_path: str, folder: str) -> None:
    started = time.process_time()
    import anyio
    from dokoro_server import DokoroSettings, build_server
    from dokoro_server.registration import ToolCache

    settings = DokoroSettings(path=Path(folder) / "dokoro")
    if name == "dokoro-core":
        from dokoro_core.server import register

        registers = [register]
    else:
        from dokoro.server import registers as unified

        registers = unified(settings)
    imported = time.process_time()
    mcp = build_server(settings, name=name, cwd=Path(folder))
    built = time.process_time()
    if mode == "cache":
        cache = ToolCache(Path(cache_path))
        with cache.active():
            for register in registers:
                register(mcp)
        cache.save()
    else:
        for register in registers:
            register(mcp)
    registered = time.process_time()
    tools = len(anyio.run(mcp.list_tools))
    listed = time.process_time()
    spent = {"import": imported - started, "register": registered - built, "list": listed - registered}
    print(json.dumps({**spent, "tools": tools}))


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src) for src in sorted(tree.glob("*/*/src")))
    return env


def _once(mode: str, name: str, cache: Path, folder: str, tree: Path | None) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, name, str(cache), folder],
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    parsed: dict[str, float] = json.loads(done.stdout)
    return parsed


def main(runs: int, before: Path | None, after: Path | None) -> None:
    trees: list[tuple[str, Path | None]] = [("", after)]
    if before is not None:
        trees.insert(0, (" [before]", before))
    found: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(runs):
            for suffix, tree in trees:
                for name in ("dokoro-core", "dokoro"):
                    cache = Path(folder) / f"tools-{name}{suffix.strip()}.json"
                    if not cache.exists():  # the start that writes the cache: not counted
                        _once("cache", name, cache, folder, tree)
                    for mode in ("cache", "built"):
                        found.setdefault((f"{name}{suffix}", mode, ""), []).append(
                            _once(mode, name, cache, folder, tree)
                        )
    print(f"CPU per start, median of {runs} processes (load average {os.getloadavg()[0]:.1f})")
    print(f"{'server':<22} {'schemas':<8} {'tools':>5} {'import ms':>10} {'register ms':>12} {'list_tools ms':>14}")
    for (server, mode, _), rows in found.items():
        median = {key: statistics.median(row[key] for row in rows) * 1000 for key in ("import", "register", "list")}
        print(
            f"{server:<22} {mode:<8} {int(rows[0]['tools']):>5} {median['import']:>10.0f}"
            f" {median['register']:>12.0f} {median['list']:>14.0f}"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:6])
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, help="also run from this checkout's sources")
    parser.add_argument("--after", type=Path, help="run the others from this checkout's sources (default: here)")
    args = parser.parse_args()
    main(args.runs, args.before, args.after)
