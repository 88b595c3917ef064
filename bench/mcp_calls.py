"""Per-call cost over real stdio: a cheap read and a plain write, as an agent's client sees them.

Spawns ``dokoro-core`` (``python -m dokoro_core``) on a fresh store, claims the workspace (as an
agent does at session start, so time tracking is on), then times, sequentially, one call at a time:

- ``dokoro_session_recall {limit: 5}`` over 20 stored summaries: p50 / p95 / mean latency;
- ``dokoro_session_summary_add``: writes per second.

The SDK's own floor is printed beside them: the same client against a bare ``MCPServer`` (no
dokoro) serving one tool that returns the same kind of result without touching anything. Also
printed: the server process's CPU time per call (user + system, from /proc, background threads
included), which other work on the machine disturbs less than latency.
Run after ``uv sync --compile-bytecode``. Usage:

    uv run python bench/mcp_calls.py [--calls 1000] [--writes 1000] [--no-claim]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

# A bare SDK server: one sync tool returning text + structured content, like a dokoro read.
_FLOOR_SERVER = textwrap.dedent(
    """
    from typing import Annotated
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, TextContent
    from pydantic import BaseModel

    class Out(BaseModel):
        ranking: str
        episodes: list[str]

    mcp = MCPServer("floor", log_level="WARNING")

    @mcp.tool()
    def floor_read(limit: int = 10) -> Annotated[CallToolResult, Out]:
        out = Out(ranking="recency", episodes=["x"] * 5)
        return CallToolResult(content=[TextContent(type="text", text="x")], structured_content=out.model_dump())

    mcp.run("stdio")
    """
)


_TICK = os.sysconf("SC_CLK_TCK")


def _child() -> int:
    """The server process this client spawned (the only child of this process)."""
    me = str(os.getpid())
    (pid,) = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _stat(entry.name) and _stat(entry.name)[1] == me
    ]
    return pid


def _stat(pid: str) -> list[str]:
    try:
        return (Path("/proc") / pid / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _cpu_ms(pid: int) -> float:
    fields = _stat(str(pid))
    return (int(fields[11]) + int(fields[12])) / _TICK * 1000


def _env(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONPATH")}
    env.update(DOKORO_PATH=str(store), DOKORO_AGENT_ID="bench")
    return env


async def _latencies(client: Client, tool: str, arguments: dict[str, Any], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        outcome = await client.call_tool(tool, arguments)
        samples.append((time.perf_counter() - started) * 1000)
        assert not outcome.is_error, outcome.content
    return samples


def _row(label: str, samples: list[float], cpu_ms: float) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return (
        f"{label:<38} {statistics.median(ordered):>8.3f} {p95:>8.3f} {statistics.mean(ordered):>8.3f}"
        f" {1000 / statistics.mean(ordered):>9.0f} {cpu_ms / len(samples):>9.3f}"
    )


async def _timed(client: Client, tool: str, arguments: dict[str, Any], count: int) -> tuple[list[float], float]:
    """Latencies (ms) of ``count`` calls after a warm-up, and the server's CPU ms spent meanwhile."""
    pid = _child()
    for _ in range(min(50, count)):  # warm up
        await client.call_tool(tool, arguments)
    before = _cpu_ms(pid)
    samples = await _latencies(client, tool, arguments, count)
    return samples, _cpu_ms(pid) - before


async def main(calls: int, writes: int, claim: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "dokoro"
        floor_script = Path(tmp) / "floor.py"
        floor_script.write_text(_FLOOR_SERVER, encoding="utf-8")
        print(f"sequential calls over stdio (claimed workspace: {claim}); latency in ms")
        print(f"{'call':<38} {'p50':>8} {'p95':>8} {'mean':>8} {'calls/s':>9} {'cpu/call':>9}")

        floor = StdioServerParameters(command=sys.executable, args=[str(floor_script)], env=_env(store))
        async with Client(floor) as client:
            print(_row("SDK floor: bare MCPServer, one tool", *await _timed(client, "floor_read", {}, calls)))

        params = StdioServerParameters(command=sys.executable, args=["-m", "dokoro_core"], env=_env(store))
        async with Client(params) as client:
            if claim:
                claimed = await client.call_tool("dokoro_workspace_claim", {"task": "bench"})
                assert not claimed.is_error, claimed.content
            for i in range(20):
                await client.call_tool(
                    "dokoro_session_summary_add",
                    {"session_id": f"seed-{i}", "ai_model": "bench", "summary": f"seeded session {i} " * 20},
                )
            read = await _timed(client, "dokoro_session_recall", {"limit": 5}, calls)
            print(_row("dokoro_session_recall {limit: 5}", *read))
            pid = _child()
            before = _cpu_ms(pid)
            samples = []
            for number in range(writes):
                arguments = {"session_id": f"w-{number}", "ai_model": "bench", "summary": "bench write"}
                started = time.perf_counter()
                outcome = await client.call_tool("dokoro_session_summary_add", arguments)
                samples.append((time.perf_counter() - started) * 1000)
                assert not outcome.is_error, outcome.content
            print(_row("dokoro_session_summary_add", samples, _cpu_ms(pid) - before))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--no-claim", action="store_true", help="do not claim the workspace (no time tracking)")
    args = parser.parse_args()
    anyio.run(main, args.calls, args.writes, not args.no_claim)
