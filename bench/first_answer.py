"""The first answer of a registration: from spawning its command to the server's `initialize` answer
over stdio, wall time and CPU (user + system of the process tree), rounds interleaved.

    uv build --all-packages --out-dir /tmp/dist
    uv tool install --compile-bytecode --find-links /tmp/dist dokoro
    uv run python bench/first_answer.py --dist /tmp/dist --rounds 7

Each command must have made its environment once before (a warm uv cache); the working folder is a
temporary project (the store is opened after the answer, so it does not count). docs/benchmarks.md,
"First answer through uvx", has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}},
    }
)


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def once(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    cpu, start = _cpu(), time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((INIT + "\n").encode())
    process.stdin.flush()
    line = process.stdout.readline()
    wall = time.perf_counter() - start
    process.stdin.close()
    process.wait()
    assert b'"result"' in line, line
    return wall, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", required=True, help="the folder of the built wheels")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    installed = shutil.which("dokoro", path=str(Path("~/.local/bin").expanduser()))
    commands = {
        "uvx --find-links dist --from dokoro dokoro": ["uvx", "--find-links", args.dist, "--from", "dokoro", "dokoro"],
        "same, --offline": ["uvx", "--offline", "--find-links", args.dist, "--from", "dokoro", "dokoro"],
        "uv run --project <clone> dokoro": ["uv", "run", "--project", str(ROOT), "dokoro"],
        "the clone's .venv/bin/dokoro": [str(ROOT / ".venv" / "bin" / "dokoro")],
    }
    if installed:
        commands["uv tool install, then dokoro"] = [installed]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOKORO_")}
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as project:
        for _ in range(args.rounds):
            for name, command in commands.items():  # interleaved: the machine's load falls on each alike
                wall, cpu = once(command, Path(project), env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name in commands:
        print(
            f"{name:44s} wall {statistics.median(walls[name]):5.2f} s (min {min(walls[name]):.2f})"
            f"   CPU {statistics.median(cpus[name]):5.2f} s (min {min(cpus[name]):.2f})"
        )


if __name__ == "__main__":
    main()
