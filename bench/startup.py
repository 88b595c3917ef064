"""Start-up time: from spawning a server process to its tools/list answer, over real stdio.

Run after `uv sync --compile-bytecode` (a normal install has bytecode; these machines set
PYTHONDONTWRITEBYTECODE=1, so without it every start recompiles). Usage:

    uv run python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def _once(module: str, store: Path) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env["DOKORO_PATH"] = str(store)
    params = StdioServerParameters(command=sys.executable, args=["-m", module], env=env)
    started = time.perf_counter()
    async with Client(params) as client:
        tools = await client.list_tools()
        elapsed = time.perf_counter() - started
    return elapsed, len(tools.tools)


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "dokoro"
        print(f"{'server':<14} {'tools':>5} {'median s':>9} {'min s':>7} {'max s':>7}  (runs={runs})")
        for module in ("dokoro_core", "dokoro"):
            await _once(module, store)  # first start creates the database; not what we time
            times = []
            count = 0
            for _ in range(runs):
                elapsed, count = await _once(module, store)
                times.append(elapsed)
            print(f"{module:<14} {count:>5} {statistics.median(times):>9.3f} {min(times):>7.3f} {max(times):>7.3f}")
        baseline = []
        for _ in range(runs):
            started = time.perf_counter()
            proc = await anyio.run_process([sys.executable, "-c", "import mcp.server.mcpserver"])
            assert proc.returncode == 0
            baseline.append(time.perf_counter() - started)
        median, low, high = statistics.median(baseline), min(baseline), max(baseline)
        print(f"{'(import mcp)':<14} {'':>5} {median:>9.3f} {low:>7.3f} {high:>7.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    anyio.run(main, parser.parse_args().runs)
