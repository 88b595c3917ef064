"""``dokoro session start|end|status`` and ``dokoro time start|stop|status`` (reference §1.5)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dokoro.commands._group import group
from dokoro.commands._open import open_for_command
from dokoro.commands._output import JsonOption, PathOption, console, emit_json, short_time

__all__ = ["session_app", "time_app"]

session_app = group("Work sessions: start one, end it with a summary agents can recall.")
time_app = group("Time spent on documents: start and stop timers.")


@session_app.command("start")
def session_start(
    focus: Annotated[str | None, typer.Option(help="The document this session is about.")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Start a work session."""
    store = open_for_command(path)
    try:
        started = store.work_sessions.start(focus)
    finally:
        store.close()
    if json:
        emit_json(started)
        return
    about = f" on {started.focus}" if started.focus else ""
    console().print(f"Started session {started.id}{about} at {short_time(started.started_at)}.")


@session_app.command("end")
def session_end(
    summary: Annotated[str | None, typer.Option(help="What the session did (kept as episodic memory).")] = None,
    session_id: Annotated[str | None, typer.Option("--id", help="Which session (default: the newest active).")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """End the active work session; prints its duration."""
    store = open_for_command(path)
    try:
        ended = store.work_sessions.end(summary, session_id=session_id)
    finally:
        store.close()
    if json:
        emit_json(ended)
        return
    kept = " Summary kept for recall." if ended.summary else ""
    console().print(f"Ended session {ended.id} after {ended.duration_min} minute(s).{kept}")


@session_app.command("status")
def session_status(json: JsonOption = False, path: PathOption = None) -> None:
    """The active work sessions, and the last one ended."""
    store = open_for_command(path)
    try:
        status = store.work_sessions.status()
    finally:
        store.close()
    if json:
        emit_json(status)
        return
    out = console()
    if not status.active:
        out.print("No active session. Start one with `dokoro session start`.")
    for s in status.active:
        about = f" on {s.focus}" if s.focus else ""
        out.print(f"active  {s.id}{about}, since {short_time(s.started_at)}")
    if status.last_ended is not None:
        last = status.last_ended
        out.print(f"last    {last.id} ended {short_time(last.ended_at)} after {last.duration_min} minute(s)")


@time_app.command("start")
def time_start(
    doc_id: Annotated[str, typer.Argument(help="The document to spend time on.")],
    slot: Annotated[int | None, typer.Option(help="The parallel slot (terminal) doing it.")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Start a timer on a document."""
    store = open_for_command(path)
    try:
        entry = store.board.start_timer(doc_id, slot=slot)
    finally:
        store.close()
    if json:
        emit_json(entry)
        return
    console().print(f"Timer started on {entry.doc_id} ({escape(entry.title)}) at {short_time(entry.started_at)}.")


@time_app.command("stop")
def time_stop(
    doc_id: Annotated[str | None, typer.Argument(help="The document (default: the only running timer).")] = None,
    notes: Annotated[str | None, typer.Option(help="A note on what the time went to.")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Stop a timer; its minutes are added to the document's actual time."""
    store = open_for_command(path)
    try:
        entry = store.board.stop_timer(doc_id, notes=notes)
        total = store.board.get(entry.doc_id).actual_min
    finally:
        store.close()
    if json:
        emit_json(entry)
        return
    console().print(f"Stopped {entry.doc_id} after {entry.duration_min} minute(s); {total} minute(s) in all.")


@time_app.command("status")
def time_status(json: JsonOption = False, path: PathOption = None) -> None:
    """The running timers."""
    store = open_for_command(path)
    try:
        running = store.board.timers()
        now = store.clock.now()
    finally:
        store.close()
    if json:
        emit_json(running)
        return
    out = console()
    if not running:
        out.print("No timer running. Start one with `dokoro time start DOC_ID`.")
    for entry in running:
        minutes = int((now - entry.started_at).total_seconds() // 60)
        slot = "" if entry.slot is None else f" slot {entry.slot}"
        out.print(
            f"{entry.doc_id}  {escape(entry.title)}  {minutes} minute(s) since {short_time(entry.started_at)}{slot}"
        )
