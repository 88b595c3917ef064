"""What automatic feedback capture costs a tool call: with and without DOKORO_AUTO_FEEDBACK.

Per-call latency of a read tool (`dokoro_block_read`) and a write tool
(`dokoro_shared_note_append`), through a real stdio server process (``DOKORO_AUTO_FEEDBACK``
true vs false) and through the in-memory client; rounds alternate on/off so drift hits both.
Also the observer's own cost per call (queueing the outcome; the write happens in a background
thread, in batches). Usage:

    uv run python bench/capture_overhead.py [--calls 300] [--rounds 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from dokoro_core.server import create_server
from dokoro_server import DokoroSettings
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("dokoro_block_read", {"block_key": "missing"}),
    ("dokoro_shared_note_append", {"content": "bench note"}),
]


async def _calls(client: Client, tool: str, arguments: dict[str, Any], count: int) -> list[float]:
    for _ in range(10):  # warm up
        await client.call_tool(tool, arguments)
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        outcome = await client.call_tool(tool, arguments)
        samples.append((time.perf_counter() - started) * 1000)
        assert not outcome.is_error
    return samples


def _stdio(store: Path, auto: bool) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(DOKORO_PATH=str(store), DOKORO_AGENT_ID="bench", DOKORO_AUTO_FEEDBACK=str(auto).lower())
    return StdioServerParameters(command=sys.executable, args=["-m", "dokoro_core"], env=env)


async def _round(store: Path, transport: str, auto: bool, tool: str, arguments: dict[str, Any], count: int):
    if transport == "stdio":
        target: Any = _stdio(store, auto)
    else:
        target = create_server(DokoroSettings(path=store, agent_id="bench", auto_feedback=auto), cwd=store.parent)
    async with Client(target) as client:
        return await _calls(client, tool, arguments, count)


def _observer_cost(store_root: Path, count: int) -> tuple[float, float]:
    """µs per call on the request path (queueing), and µs per row of the background batch write."""
    from dokoro_server import AppState
    from dokoro_server.capture import FeedbackRecorder
    from dokoro_store import Store
    from dokoro_store.affective.service import Outcome

    with Store.open(store_root) as store:
        app = AppState(store=store, settings=DokoroSettings(path=store_root), cwd=store_root)
        recorder = FeedbackRecorder(app, "bench")
        started = time.perf_counter()
        for _ in range(count):
            recorder(app, "dokoro_block_read", True, 1.5)
        per_call = (time.perf_counter() - started) / count * 1e6
        recorder.close()
        assert recorder.written == count, (recorder.written, recorder.dropped)
        batch = [Outcome("bench", "dokoro_block_read", "success", latency_ms=2, confidence=1.0)] * 50
        started = time.perf_counter()
        for _ in range(40):
            store.feedback.record_many(batch)
        per_row = (time.perf_counter() - started) / (40 * len(batch)) * 1e6
    return per_call, per_row


async def main(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "dokoro"
        print(f"per-call latency, ms (median / mean of {calls} calls x {rounds} rounds per setting)")
        print(f"{'transport':<10} {'tool':<27} {'capture off':>14} {'capture on':>14} {'overhead':>10}")
        for transport in ("stdio", "in-memory"):
            for tool, arguments in TOOLS:
                samples: dict[bool, list[float]] = {False: [], True: []}
                for _ in range(rounds):
                    for auto in (False, True):
                        samples[auto] += await _round(store, transport, auto, tool, arguments, calls)
                off, on = samples[False], samples[True]
                print(
                    f"{transport:<10} {tool:<27} {statistics.median(off):>6.3f} / {statistics.mean(off):<6.3f}"
                    f"{statistics.median(on):>6.3f} / {statistics.mean(on):<6.3f}"
                    f"{statistics.median(on) - statistics.median(off):>+9.3f}"
                )
        per_call, per_row = _observer_cost(Path(tmp) / "observer", 5_000)
        print(f"\nobserver on the request path (queue one outcome): {per_call:.2f} µs per call")
        print(f"background writer (batches of 50, one transaction each): {per_row:.1f} µs per row")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    anyio.run(main, args.calls, args.rounds)
