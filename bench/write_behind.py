"""Does the write-behind embedder slow the writer? 1,000 writes with and without it competing.

A server's writes (``dokoro_session_summary_add``, ``search_index_content``) answer once their row
and full text are committed; a background step of the same process embeds them a moment later
(``dokoro_store.background.write_behind``). This bench times a sustained stream of writes, one at a
time, in two settings that differ only in that step:

- *alone*: the step is held back (its delay set to an hour) until the stream is over, so nothing
  competes with the writer;
- *competing*: the step runs as a server runs it, embedding (and copying to LanceDB) while the
  stream goes on.

Both through the store in process (``--via store``: ``store.episodic.add_summary``,
``store.docs.index_content``) and through MCP over stdio (``--via mcp``: the unified ``dokoro``
server, raw JSON-RPC lines). Each cell runs in a fresh process on a fresh store, with the default
embedder (``auto``: the bundled ONNX model when installed). Right after the stream a search for the
last text (full text, or a recall) must find it, and is timed; so is the vectors' catch-up
(competing: from the last answer until no write waits for its vectors, the search's own
embedding included).

``--before DIR`` runs the same cells on another source tree (``git archive <commit> | tar -x -C
DIR``), interleaved with this one, so one run gives before/after ratios::

    uv run python bench/write_behind.py [--writes 1000] [--rounds 2] [--via store,mcp]
        [--kinds summary,index] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parents[1]
_SOURCES = (
    "shared/dokoro-store/src",
    "shared/dokoro-server/src",
    "servers/dokoro-core/src",
    "servers/dokoro-search/src",
    "servers/dokoro-planning/src",
    "servers/dokoro-tracking/src",
    "servers/dokoro-analytics/src",
    "servers/dokoro-bridge/src",
    "packages/dokoro/src",
)
# Where the delay of the write-behind step lives (one module now; two before the protocol was one).
_DELAYS = (
    "dokoro_store.background.write_behind",
    "dokoro_store.semantic.documents.indexing.embed_behind",
    "dokoro_store.episodic.service",
)
_HOLD_BACK = f"""
import importlib
for _name in {_DELAYS!r}:
    try:
        _module = importlib.import_module(_name)
    except ImportError:
        continue
    if hasattr(_module, "EMBED_DELAY"):
        _module.EMBED_DELAY = 3600.0
"""
_HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
WAIT_S = 120.0  # a bound on the catch-up, not an expected time


def _text(kind: str, n: int) -> str:
    if kind == "summary":
        return (
            f"Session {n}: fixed the race in module {n % 17} where the refresh token of worker {n % 5} "
            f"expired during the retry; added a regression test and noted the cache TTL ({n % 60} s)."
        )
    return f"Note {n}: the cache of service {n % 13} expires after {n % 90} s; restart it with `svc {n} restart`."


# ----------------------------------------------------------------------------- in process
def _write(store: Any, kind: str, n: int) -> None:
    if kind == "summary":
        store.episodic.add_summary(f"s-{n}", "bench", _text(kind, n))
    else:
        store.docs.index_content(f"note-{n}", _text(kind, n), f"Note {n}")


def _found(store: Any, kind: str, n: int) -> bool:
    if kind == "summary":
        hits = store.episodic.recall(query=f"Session {n} module {n % 17}", limit=5)
        return any(hit.session_id == f"s-{n}" for hit in hits)
    hits = store.search.universal(f"Note {n} service {n % 13}", mode="keyword", limit=5).hits
    return any(hit.doc_id == f"note-{n}" for hit in hits)


def _in_process(kind: str, competing: bool, writes: int) -> dict[str, Any]:
    if not competing:
        exec(_HOLD_BACK, {})
    from dokoro_store import RetrievalConfig, Store

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        store = Store.open(Path(tmp) / "dokoro", retrieval=RetrievalConfig(embed_behind=True))
        try:
            for n in range(30):  # warm-up: the embedder loaded, the first vectors copied (LanceDB imported)
                _write(store, kind, -1 - n)
            store.docs.embed_written()
            store.episodic.recall(query="warm up")
            time.sleep(4)
            samples = []
            for n in range(writes):
                started = time.perf_counter()
                _write(store, kind, n)
                samples.append((time.perf_counter() - started) * 1000)
            ended = time.perf_counter()
            found = _found(store, kind, writes - 1)  # a search right after the stream
            searched = time.perf_counter() - ended
            caught_up = None
            if competing:  # polled on a connection of its own: the store's would count as foreground work
                database = store.paths.sqlite_file
                while _waiting_in_file(database) and time.perf_counter() - ended < WAIT_S:
                    time.sleep(0.02)
                caught_up = time.perf_counter() - ended
            return {"samples": samples, "found": found, "searched": searched, "caught_up": caught_up}
        finally:
            store.close(finish=False)


# ----------------------------------------------------------------------------- over MCP
def _call(process: subprocess.Popen[bytes], ident: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()
    while True:
        answer: dict[str, Any] = json.loads(process.stdout.readline())
        if answer.get("id") == ident:
            assert "error" not in answer and not answer["result"].get("isError"), answer
            return answer


def _tool_call(kind: str, n: int) -> tuple[str, dict[str, Any]]:
    if kind == "summary":
        return "dokoro_session_summary_add", {"session_id": f"s-{n}", "ai_model": "bench", "summary": _text(kind, n)}
    return "search_index_content", {"doc_id": f"note-{n}", "content": _text(kind, n), "title": f"Note {n}"}


def _waiting_in_file(database: Path) -> int:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        summaries = connection.execute("SELECT count(*) FROM conversation_summaries WHERE embedding IS NULL")
        docs = connection.execute("SELECT count(*) FROM doc_vectors WHERE embedder IS NULL")
        return int(summaries.fetchone()[0]) + int(docs.fetchone()[0])
    finally:
        connection.close()


def _over_mcp(kind: str, competing: bool, writes: int) -> dict[str, Any]:
    code = ("" if competing else _HOLD_BACK) + "\nfrom dokoro.__main__ import main\nmain()\n"
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp) / "dokoro"
        env = dict(os.environ, DOKORO_PATH=str(root), DOKORO_AGENT_ID="bench")
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            for message in (
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _HELLO},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            ):
                process.stdin.write((json.dumps(message) + "\n").encode())
                process.stdin.flush()
                if "id" in message:
                    process.stdout.readline()
            ident = 2
            _call(process, ident, "dokoro_workspace_claim", {"task": "bench"})
            for n in range(30):  # warm-up, as in process
                ident += 1
                _call(process, ident, *_tool_call(kind, -1 - n))
            ident += 1
            _call(process, ident, "search_universal", {"query": "warm up", "limit": 3})
            time.sleep(4)
            samples = []
            for n in range(writes):
                ident += 1
                tool, arguments = _tool_call(kind, n)
                started = time.perf_counter()
                _call(process, ident, tool, arguments)
                samples.append((time.perf_counter() - started) * 1000)
            ended = time.perf_counter()
            ident += 1
            query = f"Session {writes - 1} module" if kind == "summary" else f"Note {writes - 1} service"
            tool, arguments = (
                ("dokoro_session_recall", {"query": query, "limit": 5})
                if kind == "summary"
                else ("search_universal", {"query": query, "mode": "keyword", "limit": 5})
            )
            answer = _call(process, ident, tool, arguments)
            searched = time.perf_counter() - ended
            wanted = f"s-{writes - 1}" if kind == "summary" else f"note-{writes - 1}"
            found = wanted in json.dumps(answer)
            caught_up = None
            if competing:
                database = root / ".dokoro" / "db" / "dokoro.sqlite"
                while _waiting_in_file(database) and time.perf_counter() - ended < WAIT_S:
                    time.sleep(0.02)
                caught_up = time.perf_counter() - ended
            return {"samples": samples, "found": found, "searched": searched, "caught_up": caught_up}
        finally:
            process.stdin.close()
            process.wait(timeout=120)
            process.stdout.close()


# ----------------------------------------------------------------------------- the runs
def _cell(tree: Path, via: str, kind: str, competing: bool, writes: int) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(tree / source) for source in _SOURCES)
    job = json.dumps({"via": via, "kind": kind, "competing": competing, "writes": writes})
    done = subprocess.run(
        [sys.executable, __file__, "--worker", job], env=env, capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise SystemExit(f"{via}/{kind} on {tree} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _figures(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return 1000 * len(ordered) / sum(ordered), statistics.median(ordered), p99


def main(writes: int, rounds: int, vias: list[str], kinds: list[str], before: Path | None) -> None:
    trees = [("before", before)] if before is not None else []
    trees.append(("this", _HERE))
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{writes} writes one at a time; load average {load}, {os.cpu_count()} cores")
    header = (
        f"{'round':>5} {'tree':<6} {'via':<5} {'kind':<7} {'embedder':<9} {'writes/s':>9} {'p50 ms':>7} {'p99 ms':>7}"
    )
    print(f"{header} {'÷ alone p50':>11} {'full text':>9} {'search after':>12} {'vectors after':>13}")
    for round_number in range(1, rounds + 1):
        for via in vias:
            for kind in kinds:
                for label, tree in trees:
                    alone_p50 = None
                    for competing in (False, True):
                        result = _cell(tree, via, kind, competing, writes)
                        rate, p50, p99 = _figures(result["samples"])
                        ratio = "" if competing is False else f"{p50 / alone_p50:.2f}×" if alone_p50 else ""
                        if not competing:
                            alone_p50 = p50
                        caught = "" if result["caught_up"] is None else f"{result['caught_up']:.2f} s"
                        searched = "" if not competing else f"{result['searched'] * 1000:.0f} ms"
                        setting = "competing" if competing else "alone"
                        found = "yes" if result["found"] else "NO"
                        print(
                            f"{round_number:>5} {label:<6} {via:<5} {kind:<7} {setting:<9} {rate:>9.1f} {p50:>7.2f}"
                            f" {p99:>7.2f} {ratio:>11} {found:>9} {searched:>12} {caught:>13}",
                            flush=True,
                        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--via", default="store,mcp")
    parser.add_argument("--kinds", default="summary,index")
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        job = json.loads(args.worker)
        run = _in_process if job["via"] == "store" else _over_mcp
        print(json.dumps(run(job["kind"], job["competing"], job["writes"])))
    else:
        main(args.writes, args.rounds, args.via.split(","), args.kinds.split(","), args.before)
