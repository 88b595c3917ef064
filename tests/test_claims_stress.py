"""File claims under contention: many real processes claiming overlapping paths against one store.

Each worker process opens the store directly and, for a bounded time, claims random overlapping
sets of paths (spelled in random case), holds them briefly and releases them; now and then it
"crashes" instead, abandoning a 1-second lease for the others to take over once it expires.

Two independent checks that no path ever has two live holders:

* while a worker holds a path it owns an exclusive marker file for it (``O_EXCL``): a second
  live holder would find the marker there;
* the claim history (``file_claim_events``, written in the claim's own transaction) is replayed
  path by path: every acquisition finds the path free, released, held by the same agent, or
  held by a lease that had expired.

All-or-nothing: a successful claim reports every requested path as acquired; after a conflict
the worker holds nothing. And no "database is locked" (or any other error) reaches a worker.
Workers start together on a "go" line on stdin once every one of them has opened the store.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from dokoro_store import Store

pytestmark = pytest.mark.slow

WORKERS = 8
SECONDS = 4.0
PATHS = [f"src/mod{i}.py" for i in range(6)]

_WORKER = r"""
import json, os, random, sys, time
from pathlib import Path
from dokoro_store import Store

root, url, me = Path(sys.argv[1]), sys.argv[2] or None, sys.argv[3]
seconds, markers, paths = float(sys.argv[4]), Path(sys.argv[5]), json.loads(sys.argv[6])
rng = random.Random(me)
project = "/project"
stats = {"acquired": 0, "acquisitions": 0, "conflicts": 0, "takeovers": 0, "crashes": 0, "iterations": 0}
errors, violations = [], []

def spell(path):
    return "".join(c.upper() if rng.random() < 0.3 else c for c in path)

with Store.open(root, database_url=url) as store:
    claims = store.coord.claims
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        stats["iterations"] += 1
        wanted = rng.sample(paths, rng.randint(1, 3))
        crash = rng.random() < 0.08
        agent = f"{me}-crash-{stats['iterations']}" if crash else me
        try:
            outcome = claims.claim([spell(p) for p in wanted], agent, root=project, ttl_seconds=1 if crash else 60)
        except Exception as exc:
            errors.append(f"claim: {type(exc).__name__}: {exc}")
            continue
        if not outcome.claimed:
            stats["conflicts"] += 1
            held = [v.path for v in claims.list(agent, include_expired=True)]
            if held:
                violations.append(f"{agent} holds {held} after a refused claim of {wanted}")
            continue
        got = sorted(item.path.lower() for item in outcome.report)
        statuses = [(i.path, i.status) for i in outcome.report]
        if got != sorted(wanted) or any(s not in ("claimed", "taken_over", "renewed") for _, s in statuses):
            violations.append(f"{agent} asked for {sorted(wanted)} and got {statuses}")
        stats["acquisitions"] += len(got)
        stats["takeovers"] += sum(1 for i in outcome.report if i.status == "taken_over")
        if crash:
            stats["crashes"] += 1  # abandon the lease: no markers, no release
            continue
        stats["acquired"] += 1
        mine = []
        for key in got:
            marker = markers / key.replace("/", "__")
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                mine.append(marker)
            except FileExistsError:
                violations.append(f"{agent} acquired {key} while another live holder had it")
        time.sleep(rng.random() * 0.004)  # hold the files for a moment
        for marker in mine:
            os.remove(marker)
        try:
            released = claims.release(agent, root=project, paths=wanted)
        except Exception as exc:
            errors.append(f"release: {type(exc).__name__}: {exc}")
            continue
        if [i.status for i in released.report] != ["released"] * len(wanted):
            violations.append(f"{agent} could not release its own {wanted}: {released.report}")
print(json.dumps({"me": me, "stats": stats, "errors": errors, "violations": violations}), flush=True)
"""


def _replay(events) -> list[str]:
    """Problems in the history: an acquisition of a path that still had a live holder."""
    problems: list[str] = []
    holder: dict[str, tuple[str, int] | None] = {}
    for event in events:
        current = holder.get(event.claim_key)
        if event.action == "claimed":
            if current is not None:
                problems.append(f"#{event.id} {event.agent_id} claimed {event.claim_key} held by {current[0]}")
        elif event.action == "renewed":
            if current is None or current[0] != event.agent_id:
                problems.append(f"#{event.id} {event.agent_id} renewed {event.claim_key} held by {current}")
        elif event.action == "taken_over":
            if current is None or current[0] != event.previous_agent or current[1] > event.at:
                problems.append(f"#{event.id} {event.agent_id} took {event.claim_key} from live {current}")
        elif event.action == "released":
            if current is None or current[0] != event.agent_id:
                problems.append(f"#{event.id} {event.agent_id} released {event.claim_key} held by {current}")
            holder[event.claim_key] = None
            continue
        else:
            problems.append(f"#{event.id} unexpected {event.action}")
        holder[event.claim_key] = (event.agent_id, int(event.expires_at))
    return problems


def test_many_processes_never_hold_one_path_twice(tmp_path: Path, database_url: str | None) -> None:
    root = tmp_path / "dokoro"
    markers = tmp_path / "markers"
    markers.mkdir()
    with Store.open(root, database_url=database_url):
        pass  # create the schema once, before the workers race

    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WORKER,
                str(root),
                database_url or "",
                f"w{n}",
                str(SECONDS),
                str(markers),
                json.dumps(PATHS),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=180) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()

    reports = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    errors = [e for r in reports for e in r["errors"]]
    violations = [v for r in reports for v in r["violations"]]
    assert errors == []  # in particular, no "database is locked"
    assert violations == []

    totals = Counter()
    for report in reports:
        totals.update(report["stats"])
    # Real contention happened, on every path of the outcome space (the count of acquisitions in the
    # bounded time depends on the machine's load, so only its lower bound of one per worker is fixed).
    assert totals["acquired"] >= WORKERS
    assert totals["conflicts"] > 0
    assert totals["crashes"] > 0
    assert totals["takeovers"] > 0

    with Store.open(root, database_url=database_url) as store:
        events = store.coord.claims.history()
        leftovers = store.coord.claims.list(include_expired=True)
    assert _replay(events) == []
    # The history is complete: one acquisition event per path each worker acquired.
    acquisitions = sum(1 for e in events if e.action in ("claimed", "taken_over", "renewed"))
    assert acquisitions == totals["acquisitions"]
    # Only abandoned ("crashed") leases are left open.
    assert all("-crash-" in view.agent_id for view in leftovers)
