"""The cost of a Claude Code hook: CPU (user + sys) and wall per call of ``dokoro hook session-start``,
``dokoro hook prompt`` and ``dokoro rules`` on a store of 10k memories and 50k captured turns, beside a
bare ``python -c pass`` in the same run.

The store is built once and kept (``--store-cache``, default ``/tmp/dokoro-bench-hooks``): 10,000
memories through ``remember_many`` (as ``bench/scale.py`` fills its stores, with a rule or two among
them), then 250 synthetic Claude Code transcripts of 200 turns each (50,000 turns; each agent turn
with a tool call) read in by ``store.capture.ingest``, the path the hooks take. 20 needles are
planted in the transcripts: a distinct fact said once, asked later in other words by the prompt
hook; the report says how many of them the prompt hook printed.

Each timed call is a fresh process, as Claude Code runs a hook: ``python -m dokoro hook <event>`` with
the event's JSON on stdin, from the project's folder. The calls run in rounds (every command once
per round, in turn), so the machine's load weighs on all of them alike; CPU is the child's own
(``os.wait4``), wall the round trip. Each hook is timed twice: in its own process (``hook …``,
``DOKORO_HOOK_WARM=off``: what the first hook of a store pays) and answered by the store's warm
server (``warm …``: what every later hook pays), with the server's own CPU per call beside it.
By default the workspace's sources are byte-compiled first
(into ``PYTHONPYCACHEPREFIX``, as an installed package is), since this machine sets
``PYTHONDONTWRITEBYTECODE``; ``--no-bytecode`` measures without.

    uv run python bench/hooks.py [--rounds 15] [--store-cache DIR] [--no-bytecode] [--importtime]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import scale

MEMORIES = 10_000
SESSIONS = 250
TURNS_PER_SESSION = 200  # 50,000 turns
NEEDLES = [
    ("the {x} export job writes its files to the cold bucket every Sunday at 03:00",
     "when does the {x} export run and where do its files go?"),
    ("we agreed that {x} retries give up after seven attempts and page the on-call",
     "how many times does {x} retry before someone gets paged?"),
]  # fmt: skip
# `dokoro rules` through the command line's Typer app, as before the quick path (for the ratio).
TYPER_RULES = "import sys; from dokoro.cli import run; sys.argv[1:] = ['rules']; run()"
NEEDLE_NAMES = ["heron", "marmot", "ibis", "lynx", "oriole", "puffin", "stoat", "tern", "vole", "wren"]


def _line(kind: str, uuid: str, session: str, at: str, content: Any, cwd: str) -> str:
    event = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.17",
        "type": kind,
        "uuid": uuid,
        "timestamp": at,
        "message": {"role": kind, "content": content},
    }
    return json.dumps(event, separators=(",", ":"))


def _transcripts(folder: Path, cwd: str) -> list[tuple[str, str]]:
    """Write the synthetic transcripts; returns the needles' (fact, question)."""
    rng = random.Random(44)
    folder.mkdir(parents=True, exist_ok=True)
    needles = [
        (fact.format(x=f"{name}-{i}"), question.format(x=f"{name}-{i}"))
        for i, name in enumerate(NEEDLE_NAMES)
        for fact, question in NEEDLES
    ]
    planted = dict(zip(rng.sample(range(SESSIONS * TURNS_PER_SESSION // 2), len(needles)), needles, strict=True))
    pair = 0
    for s in range(SESSIONS):
        session = f"bench-{s:04d}-0000-0000-0000-000000000000"
        lines = []
        for t in range(TURNS_PER_SESSION // 2):
            service, component = rng.choice(scale.SERVICES), rng.choice(scale.COMPONENTS)
            tool, person, adj = rng.choice(scale.TOOLS), rng.choice(scale.PEOPLE), rng.choice(scale.ADJ)
            at = f"2026-{1 + s % 11:02d}-{1 + s % 27:02d}T{8 + t // 12:02d}:{(t * 5) % 60:02d}:00.000Z"
            ask = f"The {service} {component} is {adj} again; {person} says {tool} is involved. Can you check?"
            answer = f"I looked at the {service} {component}: the {tool} client is {adj}, so I adjusted its settings."
            if pair in planted:
                fact, _question = planted[pair]
                ask = f"Note for later: {fact}."
                answer = f"Noted: {fact}."
            pair += 1
            lines.append(_line("user", f"u-{s}-{t}", session, at, ask, cwd))
            content = [
                {"type": "text", "text": answer},
                {"type": "tool_use", "id": f"t-{s}-{t}", "name": "Edit",
                 "input": {"file_path": f"{cwd}/src/{service}/{component.replace(' ', '_')}.py"}},
            ]  # fmt: skip
            lines.append(_line("assistant", f"a-{s}-{t}", session, at, content, cwd))
        (folder / f"{session}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return needles


def build(cache: Path) -> Path:
    """The project folder holding the benchmark's store (built the first time)."""
    project = cache / "project"
    done = cache / "built.json"
    if done.exists():
        return project
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    shutil.rmtree(cache, ignore_errors=True)
    project.mkdir(parents=True)
    started = time.perf_counter()
    figures = scale._fill_store(project / "dokoro", MEMORIES, "auto", None)
    needles = _transcripts(cache / "transcripts", str(project))
    with Store.open(project / "dokoro", retrieval=RetrievalConfig(embedder="auto")) as store:
        store.memories.remember(type="rule", title="Run the tests before a commit", body="uv run pytest -q first")
        store.memories.remember(type="guardrail", title="Never force-push main", body="open a pull request")
        handle = store.embedder
        inner = handle.get()
        cached = scale._CachedEmbedder(inner, scale.CACHE / f"{inner.id.replace(':', '_')}-hooks-turns.npy")
        handle._resolved = cached  # the bench's cache in front of the model (fill only)
        for n, transcript in enumerate(sorted((cache / "transcripts").glob("*.jsonl"))):
            store.capture.ingest(transcript.stem, transcript, project=project)
            if n % 25 == 0:
                print(f"  ingested {n}/{SESSIONS} transcripts ({time.perf_counter() - started:.0f} s)", flush=True)
        cached.save()
        handle._resolved = inner
        store.docs.vector_index().optimise()
        turns = sum(1 for _ in store.capture.sessions(limit=1000))
    done.write_text(json.dumps({"built_s": time.perf_counter() - started, "sessions": turns, "needles": needles,
                                **figures}))  # fmt: skip
    return project


def _compile(env: dict[str, str]) -> None:
    """Byte-compile the workspace's sources into the cache prefix (what an installed package has)."""
    root = Path(__file__).resolve().parents[1]
    sources = [str(p) for group in ("shared", "servers", "packages") for p in (root / group).glob("*/src")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *sources], env=env, check=True, capture_output=True)


def _run(argv: Sequence[str], stdin: str | None, cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """One process: (CPU s, wall s, stdout)."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    if stdin is not None:
        proc.stdin.write(stdin.encode())
    proc.stdin.close()
    out = proc.stdout.read().decode()
    _pid, _status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - began, out


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _server_cpu(pid: int) -> float:
    """CPU seconds (user + sys) the warm server has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_warm(project: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """The store's warm server, started as the hooks start it; returns it and its pid once it listens."""
    from dokoro.commands.hooks.warm import socket_path

    root = project / "dokoro"
    server = subprocess.Popen([sys.executable, "-m", "dokoro", "hook", "warm", "--path", str(root), "--idle", "900"],
                              cwd=project, env=env, stdin=subprocess.DEVNULL)  # fmt: skip
    path = socket_path(root.resolve(), None, "auto")
    assert path is not None
    deadline = time.monotonic() + 300
    while not path.exists():
        assert time.monotonic() < deadline and server.poll() is None, "the warm server did not start"
        time.sleep(0.2)
    return server, server.pid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--store-cache", type=Path, default=Path("/tmp/dokoro-bench-hooks"))
    parser.add_argument("--no-bytecode", action="store_true")
    parser.add_argument("--importtime", action="store_true", help="Print the slowest imports of each command once.")
    args = parser.parse_args()

    project = build(args.store_cache)
    built = json.loads((args.store_cache / "built.json").read_text())
    needles = [tuple(n) for n in built["needles"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOKORO_")}
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(args.store_cache / "pycache")
        _compile(env)
    cold = {**env, "DOKORO_HOOK_WARM": "off"}
    py = sys.executable
    base = {"cwd": str(project), "transcript_path": str(project / "none.jsonl"), "session_id": "bench-live"}

    def start(i: int) -> str:
        return json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"})

    def prompt(i: int) -> str:
        return json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": needles[i % len(needles)][1]})

    hook = [py, "-m", "dokoro", "hook"]
    commands: dict[str, tuple[list[str], Any, dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], None, cold),
        "hook session-start": ([*hook, "session-start", "--timeout", "60"], start, cold),
        "hook prompt": ([*hook, "prompt", "--timeout", "60"], prompt, cold),
        "rules": ([py, "-m", "dokoro", "rules"], None, cold),
        "rules (Typer path)": ([py, "-c", TYPER_RULES], None, cold),
        "warm session-start": ([*hook, "session-start", "--timeout", "60"], start, env),
        "warm prompt": ([*hook, "prompt", "--timeout", "60"], prompt, env),
    }
    server, pid = _start_warm(project, env)
    try:
        for argv, stdin, use in commands.values():  # warm the page cache, the bytecode and the server
            _run(argv, stdin(0) if stdin else None, project, use)
        if args.importtime:
            for name, (argv, stdin, use) in commands.items():
                if name == "python -c pass" or name.startswith("warm"):
                    continue
                done = subprocess.run([py, "-X", "importtime", *argv[1:]], input=stdin(0) if stdin else None,
                                      text=True, capture_output=True, cwd=project, env=use)  # fmt: skip
                rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
                top = sorted(((int(r[1]), r[2].rstrip()) for r in rows[1:] if r[1].strip().isdigit()), reverse=True)
                print(f"\n{name}: slowest imports (cumulative µs)")
                for us, module in top[:12]:
                    print(f"  {us:>9,}  {module}")
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        served: dict[str, list[float]] = {"warm session-start": [], "warm prompt": []}
        found = {"hook prompt": 0, "warm prompt": 0}
        for i in range(args.rounds):
            for name, (argv, stdin, use) in commands.items():
                before = _server_cpu(pid) if name in served else 0.0
                cpu, wall, out = _run(argv, stdin(i) if stdin else None, project, use)
                if name in served:
                    served[name].append(_server_cpu(pid) - before)
                samples[name].append((cpu, wall))
                if name in found:
                    found[name] += needles[i % len(needles)][0][:40] in out
    finally:
        server.terminate()
        server.wait(timeout=60)
    bare = statistics.median(c for c, _w in samples["python -c pass"])
    print(f"\n{platform.node()} · {os.cpu_count()} cores · load {os.getloadavg()[0]:.1f} · "
          f"{time.strftime('%Y-%m-%d')} · {'bytecode' if not args.no_bytecode else 'no bytecode'} · "
          f"store: {MEMORIES:,} memories, {SESSIONS * TURNS_PER_SESSION:,} turns · {args.rounds} rounds")  # fmt: skip
    print(f"{'command':<22}{'CPU p50':>9}{'CPU p95':>9}{'wall p50':>10}{'wall p95':>10}{'CPU ÷ bare':>12}"
          f"{'server CPU p50':>16}")  # fmt: skip
    for name, rows in samples.items():
        cpus, walls = [c for c, _w in rows], [w for _c, w in rows]
        cpu50 = statistics.median(cpus)
        extra = f"{statistics.median(served[name]):>16.3f}" if name in served else ""
        print(f"{name:<22}{cpu50:>9.3f}{_p(cpus, 0.95):>9.3f}{statistics.median(walls):>10.3f}"
              f"{_p(walls, 0.95):>10.3f}{cpu50 / bare if bare else 0:>11.1f}×{extra}")  # fmt: skip
    for name, hits in found.items():
        print(f"{name}: printed the planted fact for {hits}/{args.rounds} prompts")


if __name__ == "__main__":
    main()
