"""Start-up time: from spawning a server process to its tools/list answer, over real stdio.

One run prints, for the MCP SDK import alone (``python -c "import mcp.server.mcpserver"``, the
floor), for a bare SDK server (an ``MCPServer`` with one tool, spawned and asked for
``tools/list`` like the others: the SDK's own start-up, a stricter floor than the import, which
also pays the process's exit) and for ``dokoro-core``, ``dokoro-search``, ``dokoro-planning`` and
``dokoro`` (unified): the median wall time from spawn to the ``tools/list`` answer, on an
existing store, and how it compares with both floors. Runs are interleaved (one of each target
per round) so that a machine busy with other work slows every target alike. Also printed: the
CPU seconds the process spent until then (user + system, from /proc; for the import, the whole
process), which other work on the machine disturbs far less than wall time.

``--no-cache`` adds, for each server, a start without the schema cache of the previous start
(``.dokoro/cache/tools-<server>.json`` deleted first, so the server builds every tool's schemas
and writes the cache again), interleaved with the cached starts. ``--before DIR`` adds the same
servers run from another checkout's sources (``DIR`` holds ``shared/``, ``servers/`` and
``packages/``, e.g. ``git archive main``; put first on ``PYTHONPATH``), for a before/after in one
run; ``--after DIR`` runs the "after" servers from such a tree too (default: this checkout, so
editing it while the bench runs changes what is measured). ``--servers`` picks the servers (default: all).

Run after ``uv sync --all-packages --compile-bytecode`` (a normal install has bytecode; these
machines set PYTHONDONTWRITEBYTECODE=1, so without it every start recompiles; compile a
``--before`` tree with ``python -m compileall -q DIR``). Usage:

    uv run python bench/startup.py [--runs 7] [--no-cache] [--before DIR] [--servers dokoro-core,dokoro]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SERVERS = {
    "bare": "bare",
    "dokoro-core": "dokoro_core",
    "dokoro-search": "dokoro_search",
    "dokoro-planning": "dokoro_planning",
    "dokoro": "dokoro",
}


@dataclass(frozen=True)
class Target:
    label: str
    module: str  # "bare" or the server's package (``python -m``)
    server: str  # the server's name (its schema cache file)
    cached: bool = True
    pythonpath: str | None = None


FLOOR = "import mcp.server.mcpserver"
BARE_SERVER = """
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bare", log_level="WARNING")


@mcp.tool()
def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"


mcp.run("stdio")
"""
_TICK = os.sysconf("SC_CLK_TCK")


def _env(store: Path, pythonpath: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["DOKORO_PATH"] = str(store)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _sources(tree: Path) -> str:
    """The ``src`` folders of a checkout's workspace members, for PYTHONPATH."""
    return os.pathsep.join(str(src) for src in sorted(tree.glob("*/*/src")))


def _children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.add(int(entry.name))
    return found


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime


async def _server_once(target: Target, store: Path) -> tuple[float, float, int]:
    if not target.cached:
        (store / ".dokoro" / "cache" / f"tools-{target.server}.json").unlink(missing_ok=True)
    args = [str(store.parent / "bare_server.py")] if target.module == "bare" else ["-m", target.module]
    params = StdioServerParameters(command=sys.executable, args=args, env=_env(store, target.pythonpath))
    before = _children()
    started = time.perf_counter()
    async with Client(params) as client:
        tools = await client.list_tools()
        elapsed = time.perf_counter() - started
        (pid,) = _children() - before
        cpu = _cpu_seconds(pid)
    return elapsed, cpu, len(tools.tools)


def _floor_once() -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", FLOOR])
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0
    proc.returncode = 0
    return elapsed, usage.ru_utime + usage.ru_stime


def _targets(servers: list[str], no_cache: bool, before: Path | None, after: Path | None) -> list[Target]:
    targets = [Target("bare SDK server (MCPServer, 1 tool)", "bare", "bare")]
    trees: list[tuple[str, str | None]] = [("", None if after is None else _sources(after))]
    if before is not None:
        trees.insert(0, (" [before]", _sources(before)))
    for suffix, pythonpath in trees:
        for server in servers:
            module = SERVERS[server]
            targets.append(Target(f"{server}{suffix}", module, server, pythonpath=pythonpath))
            if no_cache:
                targets.append(Target(f"{server}{suffix}, no cache", module, server, False, pythonpath))
    return targets


async def main(runs: int, servers: list[str], no_cache: bool, before: Path | None, after: Path | None) -> None:
    targets = _targets(servers, no_cache, before, after)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "dokoro"
        (Path(tmp) / "bare_server.py").write_text(BARE_SERVER, encoding="utf-8")
        counts: dict[str, int] = {}
        for target in targets:  # the first start creates the store: not timed
            counts[target.label] = (await _server_once(target, store))[2]
        wall: dict[str, list[float]] = {name: [] for name in ["floor", *counts]}
        cpu: dict[str, list[float]] = {name: [] for name in wall}
        for _ in range(runs):
            elapsed, spent = _floor_once()
            wall["floor"].append(elapsed)
            cpu["floor"].append(spent)
            for target in targets:
                elapsed, spent, _count = await _server_once(target, store)
                wall[target.label].append(elapsed)
                cpu[target.label].append(spent)
        load = os.getloadavg()[0]
        print(f"spawn -> tools/list over stdio, median of {runs} interleaved runs (load average {load:.1f})")
        print(f"{'target':<40} {'tools':>5} {'wall s':>7} {'min s':>7} {'x import':>9} {'x bare':>7}", end="")
        print(f" {'cpu s':>6} {'x import':>9} {'x bare':>7}")
        bare = targets[0].label
        floors = {key: (statistics.median(wall[key]), statistics.median(cpu[key])) for key in ("floor", bare)}
        for name in wall:
            label = {"floor": f'python -c "{FLOOR}"'}.get(name, name)
            w, c = statistics.median(wall[name]), statistics.median(cpu[name])
            count = str(counts.get(name, ""))
            print(
                f"{label:<40} {count:>5} {w:>7.3f} {min(wall[name]):>7.3f}"
                f" {w / floors['floor'][0]:>8.2f}x {w / floors[bare][0]:>6.2f}x"
                f" {c:>6.2f} {c / floors['floor'][1]:>8.2f}x {c / floors[bare][1]:>6.2f}x"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-cache", action="store_true", help="also start each server without its schema cache")
    parser.add_argument("--before", type=Path, help="also run the servers of this checkout's sources")
    parser.add_argument("--after", type=Path, help="run the other servers from this checkout's sources")
    parser.add_argument("--servers", default=",".join(name for name in SERVERS if name != "bare"))
    args = parser.parse_args()
    chosen = [name.strip() for name in args.servers.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in SERVERS or name == "bare"]
    if unknown:
        parser.error(f"unknown server {', '.join(unknown)}; choose among {', '.join(list(SERVERS)[1:])}")
    anyio.run(main, args.runs, chosen, args.no_cache, args.before, args.after)
