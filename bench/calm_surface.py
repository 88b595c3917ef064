"""The surface an agent's client meets, in one run over real stdio: cold start, a cheap read, the
three writes, and how long the server takes to exit once stdin closes.

Spawns the unified ``dokoro`` server (``python -m dokoro``) on a fresh store and prints:

- cold start: spawn → ``initialize`` → ``tools/list`` answered (median of ``--starts`` runs);
- exit: stdin closed → process gone, after a session that wrote (median of ``--starts`` runs);
- a cheap read: ``dokoro_session_recall {limit: 5}`` over 20 summaries, p50 / p95 / calls per second;
- writes, one call at a time: ``dokoro_session_summary_add``, ``search_index_content`` and
  ``dokoro_remember`` (distinct texts, through the conflict gate): p50 / p95 / writes per second;
- ``dokoro_remember`` again with real, distinct facts (LoCoMo's observations, when
  ``../shared/bench/locomo-dev.json`` is there): the first row's texts share a template, so the gate
  finds five near-duplicates for each and writes their pairs; an agent's facts mostly differ;
- each write's p50 over the read's p50 (targets: summary and index ≤ 1.5×, remember ≤ 3×; exit ≤ 0.2 s).

Every figure comes from the same run, so the ratios hold however loaded the machine is; the load
average is printed beside them. Run after ``uv sync --all-packages --compile-bytecode``:

    uv run python bench/calm_surface.py [--calls 300] [--writes 200] [--remembers 100] [--starts 3]
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
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

# ``../shared/bench`` beside the checkout (a worktree may sit deeper: the nearest one up is used).
_LOCOMO = next(
    (
        p / "shared" / "bench" / "locomo-dev.json"
        for p in Path(__file__).resolve().parents[1:]
        if (p / "shared" / "bench" / "locomo-dev.json").is_file()
    ),
    None,
)
_HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


def _env(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONPATH")}
    env.update(DOKORO_PATH=str(store), DOKORO_AGENT_ID="bench")
    return env


def _line(process: subprocess.Popen[bytes], message: dict[str, Any], *, answer: bool = True) -> None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()
    if answer:
        process.stdout.readline()


def _start_and_exit(store: Path, write: bool) -> tuple[float, float]:
    """Seconds from spawn to the tool list, and from stdin closed to the process gone."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "dokoro"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(store),
    )
    _line(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _HELLO})
    _line(process, {"jsonrpc": "2.0", "method": "notifications/initialized"}, answer=False)
    _line(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    listed = time.perf_counter() - started
    if write:
        arguments = {"session_id": "exit", "ai_model": "bench", "summary": f"exit run {time.time()}"}
        _line(
            process,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "dokoro_session_summary_add", "arguments": arguments},
            },
        )
    assert process.stdin is not None and process.stdout is not None
    closed = time.perf_counter()
    process.stdin.close()
    process.wait(timeout=120)
    exited = time.perf_counter() - closed
    process.stdout.close()
    return listed, exited


async def _timed(client: Client, tool: str, arguments: Any, count: int) -> list[float]:
    samples = []
    for number in range(count):
        args = arguments(number) if callable(arguments) else arguments
        started = time.perf_counter()
        outcome = await client.call_tool(tool, args)
        samples.append((time.perf_counter() - started) * 1000)
        assert not outcome.is_error, outcome.content
    return samples


def _row(label: str, samples: list[float], read_p50: float | None = None) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    ratio = f"{p50 / read_p50:>7.2f}×" if read_p50 else f"{'':>8}"
    return f"{label:<34} {p50:>8.2f} {p95:>8.2f} {1000 / statistics.mean(ordered):>9.1f} {ratio}"


async def _session(store: Path, calls: int, writes: int, remembers: int) -> list[str]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "dokoro"], env=_env(store))
    rows = []
    async with Client(params) as client:
        claimed = await client.call_tool("dokoro_workspace_claim", {"task": "bench"})
        assert not claimed.is_error, claimed.content
        for i in range(20):
            summary = {"session_id": f"seed-{i}", "ai_model": "bench", "summary": f"seeded session {i} " * 20}
            await client.call_tool("dokoro_session_summary_add", summary)
        # Warm-ups: the first call of each tool loads what it needs (the embedder, LanceDB, the gate).
        await _timed(client, "dokoro_session_recall", {"limit": 5}, 30)
        await client.call_tool("search_index_content", {"doc_id": "warm", "content": "warm up text", "title": "W"})
        await client.call_tool("dokoro_remember", {"type": "fact", "title": "warm up", "body": "warm up body"})
        # The first write's vectors reach LanceDB MIRROR_DELAY (2 s) after it, and that first copy
        # imports LanceDB (about a second of CPU): wait it out, or it lands inside the timed calls.
        await anyio.sleep(6)
        read = await _timed(client, "dokoro_session_recall", {"limit": 5}, calls)
        read_p50 = statistics.median(read)
        rows.append(_row("dokoro_session_recall {limit: 5}", read))
        summaries = await _timed(
            client,
            "dokoro_session_summary_add",
            lambda n: {
                "session_id": f"w-{n}",
                "ai_model": "bench",
                "summary": f"session {n}: fixed bug {n} in module {n % 17}",
            },
            writes,
        )
        rows.append(_row("dokoro_session_summary_add", summaries, read_p50))
        indexed = await _timed(
            client,
            "search_index_content",
            lambda n: {
                "doc_id": f"note-{n}",
                "content": f"Note {n}: the cache of service {n % 13} expires after {n} s.",
                "title": f"Note {n}",
            },
            writes,
        )
        rows.append(_row("search_index_content", indexed, read_p50))
        remembered = await _timed(
            client,
            "dokoro_remember",
            lambda n: {
                "type": "fact",
                "title": f"fact {n}",
                "body": f"Service {n} listens on port {8000 + n} and logs to /var/log/s{n}.",
            },
            remembers,
        )
        rows.append(_row("dokoro_remember", remembered, read_p50))
        facts = _observations(remembers)
        if facts:
            distinct = await _timed(
                client,
                "dokoro_remember",
                lambda n: {"type": "fact", "title": facts[n][:80], "body": facts[n], "session_id": "locomo"},
                len(facts),
            )
            rows.append(_row("dokoro_remember (LoCoMo facts)", distinct, read_p50))
    return rows


def _observations(count: int) -> list[str]:
    """``count`` distinct facts: LoCoMo's observations of its first conversations, in order."""
    if _LOCOMO is None:
        return []
    facts: list[str] = []
    for conversation in json.loads(_LOCOMO.read_text(encoding="utf-8")):
        for session in conversation["observation"].values():
            for lines in session.values():
                facts.extend(str(line[0]) for line in lines)
    return list(dict.fromkeys(facts))[:count]


def main(calls: int, writes: int, remembers: int, starts: int) -> None:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "dokoro"
        _start_and_exit(store, write=True)  # creates and migrates the store, fills the tool cache
        runs = [_start_and_exit(store, write=True) for _ in range(starts)]
        rows = anyio.run(_session, store, calls, writes, remembers)
    loads = " / ".join(f"{value:.1f}" for value in load)
    print(f"dokoro over stdio, one run; load average {loads} on {os.cpu_count()} cores")
    print(f"cold start (spawn → tools/list): {statistics.median(r[0] for r in runs):.3f} s (median of {starts})")
    print(
        f"exit (stdin closed → gone, after a write): {statistics.median(r[1] for r in runs):.3f} s (median of {starts})"
    )
    print(f"{'call':<34} {'p50 ms':>8} {'p95 ms':>8} {'per s':>9} {'÷ read':>8}")
    for row in rows:
        print(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=100)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    main(args.calls, args.writes, args.remembers, args.starts)
