"""``dokoro hook <event>``: what Claude Code runs at each lifecycle event — the fast path.

``dokoro``'s ``__main__`` hands ``hook`` here before Typer, Rich, the server kit or the MCP SDK
load; this module imports the store only, and the store loads its embedding model only when a
query needs one. The rules of a hook:

- it never blocks the person: whatever happens — no store here, a bad event, an error, a time-out —
  it exits 0, and a failure prints nothing (the reason goes to the store's hooks journal, which
  ``dokoro hooks status`` reads);
- the work runs in a worker thread bounded by ``--timeout``; past it the process leaves at once,
  having printed nothing (a write cut short is rolled back by the database and done again next time);
- session-start and prompt print ``{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}``
  when there is something to say, and nothing otherwise; the capture events print nothing.

The store is found as a server finds it, from the event's ``cwd``: ``--path``, else ``DOKORO_PATH``
(relative to that folder), else its ``./dokoro``; ``DOKORO_DATABASE_URL`` names a team database.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro.commands.environment import embedder_choice, hooks_warm
from dokoro.commands.hooks.events import CAPTURE_EVENTS, CLIENT_EVENTS, EVENTS, MAX_EVENT_BYTES, HookEvent, parse_event

if TYPE_CHECKING:
    from dokoro_store import Store, StorePaths

__all__ = ["DEFAULT_BUDGET", "DEFAULT_TIMEOUT", "HookOptions", "main", "parse_args"]

# Seconds a hook may take before it gives up saying nothing (the client's own time-out, written by
# `dokoro hooks install`, is longer).
DEFAULT_TIMEOUT = {"session-start": 5.0, "prompt": 2.0, "pre-compact": 50.0, "stop": 50.0, "session-end": 50.0}
DEFAULT_BUDGET = {"session-start": 1500, "prompt": 500}  # tokens of additional context
USAGE = (
    "usage: dokoro hook {session-start|prompt|pre-compact|stop|session-end} "
    "[--path FOLDER] [--timeout SECONDS] [--budget TOKENS] [--min-relevance R]\n"
    "Reads the client's hook event (JSON) on stdin; `dokoro hooks install` wires it into Claude Code."
)


@dataclass
class HookOptions:
    event: str
    path: Path | None = None
    timeout: float = 2.0
    budget: int = 500
    min_relevance: float | None = None


@dataclass
class _Outcome:
    output: str = ""
    outcome: str = ""
    error: BaseException | None = None
    extra: dict[str, object] = field(default_factory=dict)


def parse_args(argv: list[str]) -> HookOptions:
    """The hook's options (``argv`` after ``hook``); ValueError with what is wrong."""
    if not argv or argv[0] not in EVENTS:
        raise ValueError(f"name the event: one of {', '.join(EVENTS)}")
    event = argv[0]
    options = HookOptions(event, timeout=DEFAULT_TIMEOUT[event], budget=DEFAULT_BUDGET.get(event, 0))
    rest = argv[1:]
    while rest:
        flag, *rest = rest
        name, _, inline = flag.partition("=")
        if name not in ("--path", "--timeout", "--budget", "--min-relevance"):
            raise ValueError(f"unknown option {flag!r}")
        if not inline:
            if not rest:
                raise ValueError(f"{name} needs a value")
            inline, *rest = rest
        try:
            if name == "--path":
                options.path = Path(inline).expanduser()
            elif name == "--timeout":
                options.timeout = float(inline)
                if not 0.1 <= options.timeout <= 600:
                    raise ValueError
            elif name == "--budget":
                options.budget = int(inline)
                if not 50 <= options.budget <= 32_000:
                    raise ValueError
            else:
                options.min_relevance = float(inline)
                if not 0.0 <= options.min_relevance <= 1.0:
                    raise ValueError
        except ValueError:
            raise ValueError(
                f"{name} {inline!r} is out of range (timeout 0.1-600 s, budget 50-32000 tokens, relevance 0-1)"
            ) from None
    return options


def _stdin() -> bytes:
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""
    return stream.buffer.read(MAX_EVENT_BYTES + 1)


def _store_root(options: HookOptions, cwd: Path) -> tuple[Path, str | None]:
    """The store folder and database URL, as a server started in ``cwd`` would find them."""
    from dokoro_store import resolve_dokoro_path

    url = os.environ.get("DOKORO_DATABASE_URL") or None
    if options.path is not None:
        return (cwd / options.path).resolve(), url
    env = os.environ.get("DOKORO_PATH") or None
    if env and not Path(env).expanduser().is_absolute():
        env = str(cwd / env)
    return resolve_dokoro_path(env, cwd), url


def _embedder_choice() -> str:
    return embedder_choice() or "auto"


def open_store(root: Path, url: str | None) -> Store:
    """The store at ``root`` (or ``url``), as a hook opens it (never creating one)."""
    from dokoro_store import RetrievalConfig, Store

    try:
        ollama_timeout = int(os.environ.get("OLLAMA_TIMEOUT_MS", "5000")) / 1000
    except ValueError:
        ollama_timeout = 5.0
    retrieval = RetrievalConfig(
        embedder=_embedder_choice(),  # type: ignore[arg-type]
        ollama_url=os.environ.get("OLLAMA_URL") or None,
        ollama_timeout_s=ollama_timeout,
    )
    return Store.open(root, database_url=url, retrieval=retrieval, create=False)


def _work(options: HookOptions, event: HookEvent, root: Path, url: str | None, result: _Outcome) -> None:
    try:
        store = open_store(root, url)
        try:
            _answer(store, options, event, result)
        finally:
            store.close(finish=options.event in CAPTURE_EVENTS)
    except BaseException as exc:  # reported by the main thread: a hook never fails the prompt
        result.error = exc


def _context(event_name: str, text: str) -> str:
    payload = {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
    return json.dumps(payload, ensure_ascii=False) + "\n"


def _answer(store: Store, options: HookOptions, event: HookEvent, result: _Outcome) -> None:
    client_event = CLIENT_EVENTS[options.event]
    if options.event == "session-start":
        from dokoro_store import session_start_text

        text = session_start_text(store, budget=options.budget)
        result.output = _context(client_event, text) if text else ""
        result.outcome = f"briefing of {len(text)} characters" if text else "nothing to say"
        return
    if options.event == "prompt":
        from dokoro_store import CLOSE_MATCH, render_recall

        prompt = (event.prompt or "").strip()
        if not prompt:
            result.outcome = "no prompt in the event"
            return
        floor = options.min_relevance if options.min_relevance is not None else CLOSE_MATCH
        lines = store.capture.recall(prompt, session_id=event.session_id, min_relevance=floor)
        text = render_recall(lines, options.budget)
        result.output = _context(client_event, text) if text else ""
        result.outcome = f"{len(lines)} close match(es)" if text else "nothing close"
        result.extra["ids"] = [line.id for line in lines][:10]
        return
    _capture(store, options, event, result)


def _capture(store: Store, options: HookOptions, event: HookEvent, result: _Outcome) -> None:
    from dokoro_store import ReadBounds

    if not event.session_id or not event.transcript_path:
        result.outcome = "no session_id or transcript_path in the event: nothing read"
        return
    project = Path(event.cwd) if event.cwd else None
    # Reading stops at half the time-out; saving and embedding what was read takes the rest.
    deadline = time.monotonic() + options.timeout * 0.5
    turns = lines = skipped = 0
    while True:
        report = store.capture.ingest(
            event.session_id,
            Path(event.transcript_path),
            project=project,
            bounds=ReadBounds(max_bytes=16 * 1024 * 1024, deadline=deadline),
        )
        turns, lines, skipped = turns + report.turns, lines + report.lines, skipped + report.skipped
        if report.status in ("off", "excluded"):
            result.outcome = f"not captured: {report.why}"
            return
        if report.done or time.monotonic() >= deadline:
            break
    result.outcome = f"{report.status}: {turns} turn(s) from {lines} line(s)" + (
        f", {skipped} skipped" if skipped else ""
    )
    result.extra.update(total_turns=report.total_turns, done=report.done, summary=report.summary)


def answer_request(store: Store, request: dict[str, Any]) -> dict[str, Any]:
    """The warm server's answer to one hook (:mod:`.warm`): the same work as in a hook's own process,
    journaled the same way (marked warm)."""
    from dokoro_store import record_hook_run

    began = time.monotonic()
    result = _Outcome()
    raw_argv = request.get("argv")
    argv = [str(a) for a in raw_argv] if isinstance(raw_argv, list) else []
    try:
        options = parse_args(argv)
        event = parse_event(json.dumps(request.get("event") or {}).encode())
        _answer(store, options, event, result)
    except Exception as exc:  # answered as an error: the hook prints nothing, as in its own process
        name = argv[0] if argv else "?"
        detail = f"{type(exc).__name__}: {exc}"[:1000]
        record_hook_run(store.paths, name, "error", detail, warm=True)
        return {"error": detail}
    ms = round((time.monotonic() - began) * 1000)
    record_hook_run(store.paths, options.event, result.outcome or "done", "", ms=ms,
                    session=event.session_id, warm=True, **result.extra)  # fmt: skip
    return {"output": result.output, "outcome": result.outcome}


def _warm(
    options: HookOptions, argv: list[str], raw: dict[str, object], root: Path, url: str | None, left: float
) -> bool:
    """Answer through the store's warm server (:mod:`.warm`); False when none answered (one is
    started for the next hook), and this process answers."""
    from dokoro.commands.hooks.warm import ask, socket_path, spawn, wait_for

    began = time.monotonic()
    path = socket_path(root, url, _embedder_choice())
    if path is None:
        return False
    # A server still starting (another hook started it a moment ago): wait for it rather than open
    # the store here too, at most until half this hook's time is gone.
    present = path.exists() or wait_for(path, left / 2)
    left -= time.monotonic() - began
    reply = ask(path, {"argv": argv, "event": raw}, left) if present else None
    if reply is None or reply.get("retired"):
        spawn(root, url)
        return False
    output = reply.get("output")
    if isinstance(output, str) and output:
        sys.stdout.write(output)
        sys.stdout.flush()
    return True


def _serve_warm(argv: list[str]) -> int:
    """``dokoro hook warm [--path DIR] [--idle SECONDS]``: the warm server (:mod:`.warm`), started by
    the hooks themselves."""
    from dokoro.commands.hooks.warm import IDLE_SECONDS, serve

    path, idle = None, IDLE_SECONDS
    rest = list(argv)
    try:
        while rest:
            flag = rest.pop(0)
            if flag == "--path" and rest:
                path = Path(rest.pop(0))
            elif flag == "--idle" and rest:
                idle = float(rest.pop(0))
            else:
                raise ValueError(flag)
    except ValueError as exc:
        sys.stderr.write(f"dokoro hook warm: unexpected {exc}\n")
        return 2
    root, url = _store_root(HookOptions("warm", path=path), Path.cwd())
    return serve(root, url, _embedder_choice(), open_store=open_store, answer=answer_request, idle=idle)


def _journal(paths: StorePaths | None, options: HookOptions, outcome: str, detail: str, **extra: object) -> None:
    if paths is None:
        return
    from dokoro_store import record_hook_run

    record_hook_run(paths, options.event, outcome, detail, **extra)


def main(argv: list[str]) -> int:
    """Run one hook (``argv`` after ``hook``); always 0 once the options are read."""
    if argv[:1] == ["warm"]:
        return _serve_warm(argv[1:])
    try:
        options = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"dokoro hook: {exc}\n{USAGE}\n")
        return 2 if sys.stdin is None or sys.stdin.isatty() else 0
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # as every entry point (onnxruntime's telemetry off)
    began = time.monotonic()
    from dokoro_store import StorePaths

    problem: str | None = None
    try:
        event = parse_event(_stdin())
    except (ValueError, OSError) as exc:
        event, problem = HookEvent(None, None, None, None), f"the event was not read: {exc}"
    try:
        cwd = Path(event.cwd) if event.cwd and Path(event.cwd).is_absolute() else Path.cwd()
        root, url = _store_root(options, cwd)
        paths = StorePaths(root)
        if url is None and not paths.sqlite_file.is_file():
            return 0  # no store for this project: nothing to say, nowhere to journal
    except OSError:
        return 0
    if problem is not None:
        _journal(paths, options, "error", problem)
        return 0
    if hooks_warm():
        left = options.timeout - (time.monotonic() - began)
        if _warm(options, argv, asdict(event), root, url, left):
            return 0  # answered (and journaled) by the warm server
    result = _Outcome()
    worker = threading.Thread(target=_work, args=(options, event, root, url, result), name="dokoro-hook", daemon=True)
    worker.start()
    worker.join(max(0.05, options.timeout - (time.monotonic() - began)))
    ms = round((time.monotonic() - began) * 1000)
    if worker.is_alive():
        _journal(paths, options, "timed out", f"no answer within {options.timeout:g} s: nothing printed", ms=ms)
        sys.stdout.flush()
        os._exit(0)  # the worker may hold a database call; leaving is what the time-out is for
    if result.error is not None:
        error = result.error
        _journal(paths, options, "error", f"{type(error).__name__}: {error}"[:1000], ms=ms)
        return 0
    if result.output:
        sys.stdout.write(result.output)
        sys.stdout.flush()
    _journal(paths, options, result.outcome or "done", "", ms=ms, session=event.session_id, **result.extra)
    return 0
