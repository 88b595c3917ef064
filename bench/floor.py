"""dokoro at the SDK's floor: each figure as a ratio to a bare SDK server, in one run, over real stdio.

Targets: a bare SDK server (an ``MCPServer`` with one tool that returns a reply of the same size as
``dokoro_session_recall``'s: the same text and structured content, under a minimal output schema),
``dokoro-core`` and ``dokoro`` (``python -m``), plus the same two servers run from another checkout
with ``--before DIR`` (``DIR`` holds ``shared/``, ``servers/`` and ``packages/``, e.g. ``git archive
main``, compiled with ``python -m compileall -q DIR``; its ``src`` folders go first on PYTHONPATH);
``--after DIR`` runs the other two from such a tree too (default: this checkout, so editing it while
the bench runs changes what is measured).

1. Start rounds (``--starts``, the order rotated every round), one JSON-RPC line at a time, the same
   client for every target: spawn → ``initialize`` → ``tools/list`` answered; → the first answer of
   a cheap read (``dokoro_session_recall {limit: 5}``; the bare server's one tool); → one summary
   write; stdin closed → process gone. Process CPU from ``wait4``. Each dokoro target has its own
   store, created (and its schema cache filled) by a first, untimed start.
2. Calls (the SDK's ``Client``, which checks every structured result against the tool's output
   schema, as a client does): every target's session open at once, a claimed workspace and 20
   summaries each, then ``--blocks`` blocks, the order rotated: ``--calls`` reads, then
   ``--writes`` summary writes (``dokoro_session_summary_add``; the bare server calls its tool
   again). p50s and sustained writes/s (writes over the block's wall time), server CPU per call.
3. Profiles (``--profile N``): ``dokoro-core`` (and its ``--before`` twin) run under cProfile
   (:func:`_profiled_server`: one profiler per thread, the event loop's and the tool workers'
   merged), N reads then N writes, each window's top functions by cumulative time per call.

Figures are medians; ratios are to the bare server in the same run. Run after
``uv sync --all-packages --compile-bytecode`` (PYTHONDONTWRITEBYTECODE=1 is set on these machines):

    uv run python bench/floor.py [--starts 7] [--blocks 5] [--calls 200] [--writes 200] [--profile 300]
                                 [--schema-checks 2000] [--before DIR] [--after DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")
_HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "floor", "version": "1"}}
READ = ("dokoro_session_recall", {"limit": 5})
BARE_TOOL = "floor_read"

# The bare SDK server: one sync tool that returns the reply file's text and structured content.
BARE_SERVER = '''
import json, sys
from typing import Annotated
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict

REPLY = json.loads(open(sys.argv[1], encoding="utf-8").read())


class Reply(BaseModel):
    model_config = ConfigDict(extra="allow")


mcp = MCPServer("bare", log_level="WARNING")


@mcp.tool()
def floor_read(limit: int = 10) -> Annotated[CallToolResult, Reply]:
    """Answer with a reply of the size of a dokoro read."""
    text = [TextContent(type="text", text=REPLY["text"])]
    return CallToolResult(content=text, structured_content=REPLY["structured"])


mcp.run("stdio")
'''


@dataclass(frozen=True)
class Target:
    label: str
    module: str  # "bare" or a server package run with ``python -m``
    pythonpath: str | None = None

    @property
    def bare(self) -> bool:
        return self.module == "bare"


@dataclass
class Samples:
    listed: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    exit: list[float] = field(default_factory=list)
    start_cpu: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)
    writes: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    read_cpu: list[float] = field(default_factory=list)
    write_cpu: list[float] = field(default_factory=list)


def _env(store: Path, pythonpath: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(DOKORO_PATH=str(store), DOKORO_AGENT_ID="floor")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _sources(tree: Path) -> str:
    return os.pathsep.join(str(src) for src in sorted(tree.glob("*/*/src")))


def _command(target: Target, work: Path) -> list[str]:
    if target.bare:
        return [sys.executable, str(work / "bare_server.py"), str(work / "reply.json")]
    return [sys.executable, "-m", target.module]


def _store(target: Target, work: Path) -> Path:
    return work / ("store-" + target.label.replace(" ", "-").replace("[", "").replace("]", ""))


def _write_args(number: int) -> dict[str, Any]:
    return {"session_id": f"w-{number}", "ai_model": "floor", "summary": f"session {number}: fixed bug {number}"}


def _call(target: Target, request_id: int, write: int | None = None) -> dict[str, Any]:
    if target.bare:
        name, arguments = BARE_TOOL, {"limit": 5}
    elif write is None:
        name, arguments = READ
    else:
        name, arguments = "dokoro_session_summary_add", _write_args(write)
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


# ---------------------------------------------------------------------------------------------- 1. start rounds


def _start_round(target: Target, work: Path) -> tuple[float, float, float, float]:
    """Seconds from spawn to tools/list, to the first read's answer, from stdin closed to exit; CPU s."""
    started = time.perf_counter()
    process = subprocess.Popen(
        _command(target, work),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(_store(target, work), target.pythonpath),
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any], answer: bool = True) -> dict[str, Any] | None:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        if not answer:
            return None
        reply: dict[str, Any] = json.loads(process.stdout.readline())
        assert "error" not in reply and not reply.get("result", {}).get("isError"), reply
        return reply

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _HELLO})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"}, answer=False)
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    listed = time.perf_counter() - started
    send(_call(target, 3))
    first = time.perf_counter() - started
    send(_call(target, 4, write=int(time.time() * 1000)))
    closed = time.perf_counter()
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    exited = time.perf_counter() - closed
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    return listed, first, exited, usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------------------------------------- 2. calls


def _children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(entry.name)
            if fields and fields[1] == me:
                found.add(int(entry.name))
    return found


def _stat(pid: str) -> list[str]:
    try:
        return (Path("/proc") / pid / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _cpu_ms(pid: int) -> float:
    fields = _stat(str(pid))
    return (int(fields[11]) + int(fields[12])) / _TICK * 1000 if fields else 0.0


async def _timed(client: Any, target: Target, count: int, write_from: int | None = None) -> list[float]:
    samples = []
    for number in range(count):
        message = _call(target, 0, None if write_from is None else write_from + number)["params"]
        started = time.perf_counter()
        outcome = await client.call_tool(message["name"], message["arguments"])
        samples.append((time.perf_counter() - started) * 1000)
        assert not outcome.is_error, outcome.content
    return samples


async def _calls(
    targets: list[Target], work: Path, blocks: int, calls: int, writes: int, out: dict[str, Samples]
) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, tuple[Any, int]] = {}
        for target in targets:
            before = _children()
            params = StdioServerParameters(
                command=_command(target, work)[0],
                args=_command(target, work)[1:],
                env=_env(_store(target, work), target.pythonpath),
            )
            client = await stack.enter_async_context(Client(params))
            (pid,) = _children() - before
            clients[target.label] = (client, pid)
            if not target.bare:
                claimed = await client.call_tool("dokoro_workspace_claim", {"task": "floor"})
                assert not claimed.is_error, claimed.content
                for i in range(20):
                    seed = {"session_id": f"seed-{i}", "ai_model": "floor", "summary": f"seeded session {i} " * 20}
                    await client.call_tool("dokoro_session_summary_add", seed)
            await _timed(client, target, 50)
            await _timed(client, target, 20, write_from=10_000_000)
        # The first writes' vectors are embedded a moment after them (loading the embedder): let it pass.
        await anyio.sleep(8)
        for block in range(blocks):
            order = targets[block % len(targets) :] + targets[: block % len(targets)]
            for target in order:
                client, pid = clients[target.label]
                samples = out[target.label]
                cpu = _cpu_ms(pid)
                reads = await _timed(client, target, calls)
                samples.read_cpu.append((_cpu_ms(pid) - cpu) / calls)
                samples.reads += reads
                cpu, started = _cpu_ms(pid), time.perf_counter()
                written = await _timed(client, target, writes, write_from=(block + 1) * 100_000)
                samples.rates.append(writes / (time.perf_counter() - started))
                samples.write_cpu.append((_cpu_ms(pid) - cpu) / writes)
                samples.writes += written


# ---------------------------------------------------------------------------------------------- 3. profiles

_PROFILED = """
import cProfile, marshal, os, runpy, signal, sys, threading, time

OUT = sys.argv[2]
profilers = {}
main = cProfile.Profile(time.thread_time)  # CPU time of the thread, not the waits
profilers[threading.main_thread().ident] = ("main", main)


def hook(frame, event, arg):
    profiler = cProfile.Profile(time.thread_time)
    profilers[threading.get_ident()] = (threading.current_thread().name, profiler)
    profiler.enable()


def clear(signum, frame):
    for _name, profiler in list(profilers.values()):
        profiler.clear()


def dump(signum, frame):
    merged = {}
    for name, profiler in list(profilers.values()):
        if name == "main" or name.startswith("AnyIO worker"):
            profiler.snapshot_stats()
            for key, (cc, nc, tt, ct, callers) in profiler.stats.items():
                old = merged.get(key)
                if old is None:
                    merged[key] = (cc, nc, tt, ct, dict(callers))
                else:
                    both = dict(old[4])
                    for caller, value in callers.items():
                        both[caller] = tuple(a + b for a, b in zip(both[caller], value)) if caller in both else value
                    merged[key] = (old[0] + cc, old[1] + nc, old[2] + tt, old[3] + ct, both)
    with open(OUT + ".tmp", "wb") as f:
        marshal.dump(merged, f)
    os.replace(OUT + ".tmp", OUT)


threading.setprofile(hook)
signal.signal(signal.SIGUSR1, clear)
signal.signal(signal.SIGUSR2, dump)
main.enable()
sys.argv = [sys.argv[1]]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


async def _profile(target: Target, work: Path, count: int, report: Path) -> list[str]:
    import pstats

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    script = work / "profiled.py"
    script.write_text(_PROFILED, encoding="utf-8")
    dumped = work / "profile.out"
    store = work / ("profile-" + _store(target, work).name)
    lines: list[str] = []
    before = _children()
    params = StdioServerParameters(
        command=sys.executable, args=[str(script), target.module, str(dumped)], env=_env(store, target.pythonpath)
    )
    async with Client(params) as client:
        (pid,) = _children() - before
        await client.call_tool("dokoro_workspace_claim", {"task": "floor"})
        for i in range(20):
            await client.call_tool(
                "dokoro_session_summary_add", {"session_id": f"s{i}", "ai_model": "m", "summary": "x " * 40}
            )
        await _timed(client, target, 50)
        await _timed(client, target, 20, write_from=10_000_000)
        await anyio.sleep(8)
        for label, write_from in (("read", None), ("write", 20_000_000)):
            dumped.unlink(missing_ok=True)
            os.kill(pid, signal.SIGUSR1)
            await anyio.sleep(0.2)
            await _timed(client, target, count, write_from=write_from)
            os.kill(pid, signal.SIGUSR2)
            with anyio.fail_after(30):
                while not dumped.exists():
                    await anyio.sleep(0.05)
            stream = report / f"profile-{target.label.replace(' ', '-')}-{label}.txt"
            with stream.open("w", encoding="utf-8") as out:
                stats = pstats.Stats(str(dumped), stream=out)
                stats.sort_stats("cumulative").print_stats(60)
                stats.sort_stats("tottime").print_stats(40)
            total = sum(tt for (_cc, _nc, tt, _ct, _callers) in stats.stats.values())  # type: ignore[attr-defined]
            lines.append(f"{target.label} {label}: {total / count * 1000:.3f} ms of profiled CPU per call -> {stream}")
    return lines


# ---------------------------------------------------------------------------------------------- 4. schema checks

HOT_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("dokoro_session_recall", {"limit": 5}),
    ("dokoro_workspace_status", {}),
    ("dokoro_get_current_focus", {}),
    ("dokoro_question_list", {}),
    ("dokoro_claim_list", {}),
    ("dokoro_session_summary_add", {"session_id": "check", "ai_model": "floor", "summary": "one line"}),
    ("dokoro_session_log", {"entry": "progress line"}),
    ("search_index_content", {"doc_id": "check", "content": "the cache expires after 60 s", "title": "Cache"}),
]


async def _schema_checks(work: Path, rounds: int) -> list[str]:
    """Per hot tool: its output schema and reply sizes, and what the client's check of the reply
    against the schema costs (the SDK client's own compiled validator, ``best_match`` over its
    errors, as ``ClientSession.validate_tool_result`` runs it), in µs per call."""
    from dokoro.server import create_unified_server
    from dokoro_server import DokoroSettings
    from jsonschema import exceptions
    from jsonschema.validators import validator_for
    from mcp import Client
    from referencing import Registry

    store = work / "schema-check"
    server = create_unified_server(DokoroSettings(path=store, agent_id="floor"), cwd=work)
    lines = [f"{'tool':<30} {'schema chars':>12} {'reply chars':>11} {'check µs':>9}"]
    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        await client.call_tool("dokoro_workspace_claim", {"task": "floor"})
        for i in range(20):
            seed = {"session_id": f"seed-{i}", "ai_model": "floor", "summary": f"seeded session {i} " * 20}
            await client.call_tool("dokoro_session_summary_add", seed)
        for name, arguments in HOT_CALLS:
            answer = await client.call_tool(name, arguments)
            assert not answer.is_error, answer.content
            schema = listed[name].output_schema or {}
            validator = validator_for(schema)(schema, registry=Registry())
            started = time.perf_counter()
            for _ in range(rounds):
                exceptions.best_match(validator.iter_errors(answer.structured_content))
            each = (time.perf_counter() - started) / rounds * 1e6
            reply = len(json.dumps(answer.model_dump(mode="json", by_alias=True, exclude_none=True)))
            lines.append(f"{name:<30} {len(json.dumps(schema)):>12} {reply:>11} {each:>9.1f}")
    return lines


# ---------------------------------------------------------------------------------------------- report


def _p(values: list[float], q: float = 0.5) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))] if ordered else float("nan")


def _report(targets: list[Target], samples: dict[str, Samples]) -> list[str]:
    bare = samples[targets[0].label]
    b_list, b_first, b_read = _p(bare.listed) * 1000, _p(bare.first) * 1000, _p(bare.reads)
    lines = [
        f"{'target':<24} {'list ms':>8} {'×':>5} {'first ms':>9} {'×':>5} {'exit ms':>8} {'start cpu s':>11}"
        f" {'read p50':>9} {'×':>5} {'write p50':>9} {'×':>5} {'writes/s':>9} {'×':>5} {'cpu/read':>8} {'cpu/write':>9}"
    ]
    for target in targets:
        s = samples[target.label]
        listed, first, read, write = _p(s.listed) * 1000, _p(s.first) * 1000, _p(s.reads), _p(s.writes)
        rate = statistics.median(s.rates) if s.rates else float("nan")
        bare_rate = statistics.median(bare.rates) if bare.rates else float("nan")
        lines.append(
            f"{target.label:<24} {listed:>8.0f} {listed / b_list:>5.2f} {first:>9.0f} {first / b_first:>5.2f}"
            f" {_p(s.exit) * 1000:>8.1f} {_p(s.start_cpu):>11.2f}"
            f" {read:>9.3f} {read / b_read:>5.2f} {write:>9.3f} {write / b_read:>5.2f}"
            f" {rate:>9.0f} {rate / bare_rate:>5.2f} {_p(s.read_cpu):>8.2f} {_p(s.write_cpu):>9.2f}"
        )
    lines.append(
        "× = ratio to the bare SDK server in this run (write p50 over the bare p50; writes/s over its calls/s)"
    )
    return lines


def _reply(work: Path) -> None:
    """The bare server's reply: what ``dokoro_session_recall {limit: 5}`` answers over 20 summaries."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def fetch() -> None:
        target = Target("reply", "dokoro_core")
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "dokoro_core"], env=_env(_store(target, work), None)
        )
        async with Client(params) as client:
            for i in range(20):
                seed = {"session_id": f"seed-{i}", "ai_model": "floor", "summary": f"seeded session {i} " * 20}
                await client.call_tool("dokoro_session_summary_add", seed)
            answer = await client.call_tool(*READ)
        text = "".join(getattr(block, "text", "") for block in answer.content)
        (work / "reply.json").write_text(
            json.dumps({"text": text, "structured": answer.structured_content}), encoding="utf-8"
        )

    anyio.run(fetch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--profile", type=int, default=300, help="calls per profiled window (0: no profile)")
    parser.add_argument("--before", type=Path, help="also run the servers of this checkout's sources")
    parser.add_argument("--after", type=Path, help="run the other servers from this checkout's sources (default: here)")
    parser.add_argument("--out", type=Path, help="where the profiles go (default: a temporary folder, printed)")
    parser.add_argument("--skip-calls", action="store_true", help="start rounds only")
    parser.add_argument("--schema-checks", type=int, default=2000, help="rounds of each check (0: none)")
    args = parser.parse_args()
    import anyio

    targets = [Target("bare SDK server", "bare")]
    if args.before is not None:
        before = _sources(args.before)
        targets += [Target("dokoro-core [before]", "dokoro_core", before), Target("dokoro [before]", "dokoro", before)]
    after = _sources(args.after) if args.after is not None else None
    targets += [Target("dokoro-core", "dokoro_core", after), Target("dokoro", "dokoro", after)]
    samples = {target.label: Samples() for target in targets}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        report = args.out or work
        report.mkdir(parents=True, exist_ok=True)
        (work / "bare_server.py").write_text(BARE_SERVER, encoding="utf-8")
        _reply(work)
        loads = [os.getloadavg()[0]]
        for target in targets if args.starts else ():  # creates each store, fills its schema cache: not timed
            _start_round(target, work)
        for round_ in range(args.starts):
            order = targets[round_ % len(targets) :] + targets[: round_ % len(targets)]
            for target in order:
                listed, first, exited, cpu = _start_round(target, work)
                s = samples[target.label]
                s.listed.append(listed)
                s.first.append(first)
                s.exit.append(exited)
                s.start_cpu.append(cpu)
        loads.append(os.getloadavg()[0])
        if args.starts and not args.skip_calls:
            anyio.run(_calls, targets, work, args.blocks, args.calls, args.writes, samples)
            loads.append(os.getloadavg()[0])
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"floor.py, {when}, load average {' → '.join(f'{x:.1f}' for x in loads)}")
        print(f"starts {args.starts}, blocks {args.blocks} × ({args.calls} reads + {args.writes} writes)")
        if args.starts:
            for line in _report(targets, samples):
                print(line)
        if args.profile:
            for target in targets:
                if target.module == "dokoro_core":
                    for line in anyio.run(_profile, target, work, args.profile, report):
                        print(line)
        if args.schema_checks:
            for line in anyio.run(_schema_checks, work, args.schema_checks):
                print(line)
        if args.out is None and args.profile:
            input_hint = "(profiles are in a temporary folder: pass --out DIR to keep them)"
            print(input_hint)


if __name__ == "__main__":
    main()
