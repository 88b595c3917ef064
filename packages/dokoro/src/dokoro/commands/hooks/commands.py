"""What a person types: ``dokoro hooks install|uninstall|status|capture``, ``dokoro import
transcripts FOLDER`` and ``dokoro forget --session ID`` (the hook itself is :mod:`.run`)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from dokoro.commands._group import group
from dokoro.commands._open import open_for_command, settings_for
from dokoro.commands._output import JsonOption, PathOption, console, emit_json, go_ahead, short_time
from dokoro.commands.hooks.events import CLIENT_EVENTS, EVENTS
from dokoro.commands.hooks.settings_file import (
    SettingsError,
    installed_events,
    plan_install,
    plan_uninstall,
    read_settings,
    write_settings,
)

__all__ = ["forget_session", "hook", "hooks_app", "import_transcripts", "offer_install"]

hooks_app = group("Claude Code's lifecycle hooks: memory captured and recalled with no tool call.")

ScopeOption = Annotated[
    str,
    typer.Option(
        "--scope",
        help="project: this folder's .claude/settings.json (shared with the team); user: ~/.claude/settings.json.",
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Only show the change.")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Change the file without asking.")]


def hook(
    event: Annotated[str, typer.Argument(help=f"The client's event: {', '.join(EVENTS)}.")],
    path: PathOption = None,
    timeout: Annotated[
        float | None, typer.Option(help="Seconds before the hook gives up, printing nothing (prompt: 2).")
    ] = None,
    budget: Annotated[
        int | None, typer.Option(help="Tokens of context it may add (session-start 1500, prompt 500).")
    ] = None,
    min_relevance: Annotated[
        float | None, typer.Option("--min-relevance", help="Prompt recall's floor (default: the calibrated 0.15).")
    ] = None,
) -> None:
    """What Claude Code runs at each lifecycle event (reads the event's JSON on stdin).

    session-start: the briefing as context; prompt: close matches for the prompt; pre-compact, stop,
    session-end: the transcript's new lines captured. Never blocks: any failure exits 0 and prints
    nothing (see `dokoro hooks status`).
    """
    from dokoro.commands.hooks.run import main

    argv = [event]
    for flag, value in (
        ("--path", path),
        ("--timeout", timeout),
        ("--budget", budget),
        ("--min-relevance", min_relevance),
    ):
        if value is not None:
            argv += [flag, str(value)]
    raise typer.Exit(main(argv))


def _settings_path(scope: str) -> Path:
    if scope == "project":
        return Path.cwd() / ".claude" / "settings.json"
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    raise typer.BadParameter("--scope is project or user", param_hint="--scope")


def _launcher() -> str:
    """How the client should run dokoro: ``dokoro`` when that is this one on the PATH, else its path."""
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    found = shutil.which("dokoro")
    if here is not None and (here.name == "__main__.py" or not here.name.startswith("dokoro")):
        # `python -m dokoro`, or dokoro's commands called from another program (a test runner):
        # this interpreter runs dokoro's module.
        return f"{shlex.quote(sys.executable)} -m dokoro"
    if found and (here is None or Path(found).resolve() == here):
        return "dokoro"
    if here is not None and here.is_file():
        return shlex.quote(str(here))
    return "dokoro"


def _apply(change: Any, *, dry_run: bool, yes: bool, verb: str) -> bool:
    out = console()
    if not change.changed:
        out.print(f"{change.path}: nothing to change.", markup=False, highlight=False)
        return True
    out.print(change.diff(), markup=False, highlight=False, end="")
    if not go_ahead(out, f"Write {change.path}?", dry_run=dry_run, yes=yes, verb=verb):
        return True
    write_settings(change)
    out.print(f"Wrote {change.path}.", markup=False, highlight=False)
    return True


@hooks_app.command("install")
def install(
    scope: ScopeOption = "project", path: PathOption = None, dry_run: DryRunOption = False, yes: YesOption = False
) -> None:
    """Add dokoro's hooks to Claude Code's settings (every other entry kept), showing the change first."""
    target = _settings_path(scope)
    options = f"--path {shlex.quote(str(path))}" if path is not None else ""
    try:
        change = plan_install(target, _launcher(), options=options)
        _apply(change, dry_run=dry_run, yes=yes, verb="written")
    except SettingsError as exc:
        typer.echo(f"dokoro: {exc}", err=True)
        raise typer.Exit(1) from None
    if not dry_run:
        typer.echo(
            "Each new Claude Code session now starts with the briefing; prompts get close matches; "
            "sessions are captured at stop, compaction and end. `dokoro hooks status` shows what ran."
        )


@hooks_app.command("uninstall")
def uninstall(scope: ScopeOption = "project", dry_run: DryRunOption = False, yes: YesOption = False) -> None:
    """Remove dokoro's hooks from Claude Code's settings; every other entry stays."""
    try:
        _apply(plan_uninstall(_settings_path(scope)), dry_run=dry_run, yes=yes, verb="written")
    except SettingsError as exc:
        typer.echo(f"dokoro: {exc}", err=True)
        raise typer.Exit(1) from None


@hooks_app.command("status")
def status(json: JsonOption = False, path: PathOption = None) -> None:
    """Which hooks are installed, when each last ran and what it did, and what capture holds."""
    from dokoro_store import StorePaths, last_hook_runs, resolve_dokoro_path

    installed: dict[str, Any] = {}
    for scope in ("project", "user"):
        target = _settings_path(scope)
        try:
            installed[scope] = {"file": str(target), "events": sorted(installed_events(read_settings(target)))}
        except SettingsError as exc:
            installed[scope] = {"file": str(target), "events": [], "problem": str(exc)}
    settings = settings_for(path)
    root = resolve_dokoro_path(str(settings.path) if settings.path else None, Path.cwd())
    runs = last_hook_runs(StorePaths(root))
    sessions: list[Any] = []
    switch: dict[str, Any] = {"on": True, "why_off": None}
    if settings.database_url or StorePaths(root).sqlite_file.is_file():
        store = open_for_command(path)
        try:
            sessions = store.capture.sessions(limit=5)
            switches = store.capture.switches(Path.cwd())
            switch = {"on": switches.on, "why_off": switches.why_off}
        finally:
            store.close(finish=False)
    warm = _warm_state(root.resolve(), settings.database_url)
    if json:
        emit_json(
            {
                "installed": installed,
                "warm_server": warm,
                "store": str(root),
                "capture": switch,
                "last_runs": runs,
                "recent_sessions": sessions,
            }
        )
        return
    out = console()
    out.print("Claude Code hooks:", markup=False)
    for scope, found in installed.items():
        events = ", ".join(found["events"]) or "not installed"
        out.print(f"  {scope:<8} {found['file']}: {events}", markup=False, highlight=False)
        if "problem" in found:
            out.print(f"           {found['problem']}", markup=False, highlight=False)
    state = "on" if switch["on"] else f"off ({switch['why_off']})"
    out.print(f"Store {root}: capture {state}", markup=False, highlight=False)
    out.print(f"Warm hook server: {warm}", markup=False, highlight=False)
    out.print("Last runs:", markup=False)
    if not runs:
        out.print("  none yet (a hook that finds no store here records nothing)", markup=False)
    for event in EVENTS:
        if event in runs:
            run = runs[event]
            took = f" ({run['ms']} ms)" if "ms" in run else ""
            detail = f": {run['detail']}" if run.get("detail") else ""
            out.print(f"  {event:<14} {run['at']}  {run['outcome']}{detail}{took}", markup=False, highlight=False)
    if sessions:
        out.print("Recently captured sessions:", markup=False)
        for s in sessions:
            out.print(
                f"  {s.session_id}  {short_time(s.last_at)}  {s.turns} turn(s)  {s.title}",
                markup=False,
                highlight=False,
            )


def _warm_state(root: Path, url: str | None) -> str:
    """Whether the store's warm hook server (:mod:`.warm`) is up, in words."""
    import socket

    from dokoro.commands.environment import embedder_choice, hooks_warm
    from dokoro.commands.hooks.warm import socket_path

    if not hooks_warm():
        return "off (DOKORO_HOOK_WARM)"
    path = socket_path(root, url, embedder_choice() or "auto")  # the hook's own choice (run.py)
    if path is None:
        return "unavailable (no private runtime folder)"
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return "not running (the next hook starts it)"
    return f"running ({path})"


@hooks_app.command("capture")
def capture_switch(
    state: Annotated[str, typer.Argument(help="on or off.")],
    project: Annotated[
        bool, typer.Option("--project", help="Switch this project folder only (its .dokoro.yml), not the whole store.")
    ] = False,
    path: PathOption = None,
) -> None:
    """Switch capture on or off for the whole store, or (--project) for this folder's sessions."""
    from dokoro_store import resolve_dokoro_path, write_capture_switch

    if state not in ("on", "off"):
        raise typer.BadParameter("on or off", param_hint="STATE")
    if project:
        folder = Path.cwd()
    else:
        settings = settings_for(path)
        folder = resolve_dokoro_path(str(settings.path) if settings.path else None, Path.cwd())
        if not folder.is_dir():
            typer.echo(f"dokoro: no dokoro folder at {folder}; create one with `dokoro init`", err=True)
            raise typer.Exit(1)
    written = write_capture_switch(folder, state == "on")
    typer.echo(f"capture: {state} in {written}")


def import_transcripts(path: Path | None, folder: Path, yes: bool, dry_run: bool) -> bool:
    """Back-fill a folder of Claude Code transcripts (``*.jsonl``): a preview, then each file read
    into the store with a progress bar; what was captured before adds nothing."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    out = console()
    if not folder.is_dir():
        out.print(f"dokoro: {folder} is not a folder of transcripts (*.jsonl)", markup=False)
        return False
    files = sorted(p for p in folder.glob("*.jsonl") if p.is_file() and not p.is_symlink())
    if not files:
        out.print(
            f"No transcripts (*.jsonl) in {folder}; Claude Code keeps them in ~/.claude/projects/<project>/.",
            markup=False,
        )
        return True
    store = open_for_command(path)
    try:
        known = store.capture.marks([p.stem for p in files])
        size = sum(p.stat().st_size for p in files)
        again = sum(1 for p in files if p.stem in known)
        out.print(
            f"{len(files)} transcript(s), {size / 1e6:.1f} MB, in {folder}: {len(files) - again} new session(s), "
            f"{again} captured before (only their new lines are read).",
            markup=False,
            highlight=False,
        )
        if not go_ahead(out, "Capture them into the store?", dry_run=dry_run, yes=yes, verb="imported"):
            return True
        totals = {"turns": 0, "skipped": 0, "off": 0}
        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
        with Progress(*columns, console=out, transient=False) as bar:
            task = bar.add_task("transcripts", total=size)
            for file in files:
                bar.update(task, description=file.name[:40])
                while True:
                    report = store.capture.ingest(file.stem, file)
                    totals["turns"] += report.turns
                    totals["skipped"] += report.skipped
                    if report.status in ("off", "excluded"):
                        totals["off"] += 1
                    if report.done:
                        break
                bar.advance(task, file.stat().st_size)
    finally:
        store.close()
    out.print(
        f"Captured {totals['turns']} turn(s) from {len(files)} transcript(s)"
        + (f"; {totals['skipped']} line(s) skipped" if totals["skipped"] else "")
        + (f"; {totals['off']} left out (capture off or excluded)" if totals["off"] else "")
        + ".",
        markup=False,
        highlight=False,
    )
    return True


def forget_session(path: Path | None, session_id: str, yes: bool) -> None:
    """Remove a captured session: its turns, its captured summary and its mark."""
    store = open_for_command(path)
    try:
        found = store.capture.session(session_id)
        out = console()
        out.print(
            f"Session {session_id}: {found.turns if found else 0} captured turn(s) will be removed.",
            markup=False,
            highlight=False,
        )
        if not go_ahead(out, "Forget it?", dry_run=False, yes=yes, verb="forgotten"):
            return
        done = store.capture.forget(session_id)
    finally:
        store.close()
    out.print(
        f"Forgot session {done.session_id}: {done.turns} turn(s), {done.summaries} captured summary, "
        f"{done.marks} mark.",
        markup=False,
        highlight=False,
    )


def offer_install() -> None:
    """``dokoro init``'s offer: the Claude Code hooks for this project (asked on a terminal only)."""
    from dokoro.commands._output import stdin_is_terminal

    target = _settings_path("project")
    try:
        if set(installed_events(read_settings(target))) == set(CLIENT_EVENTS):
            return
    except SettingsError:
        return
    if not stdin_is_terminal():
        typer.echo("To capture sessions and recall them with no tool call: `dokoro hooks install` (Claude Code).")
        return
    if typer.confirm(
        f"Install dokoro's Claude Code hooks in {target} (capture and recall with no tool call)?", default=False
    ):
        install(scope="project", path=None, dry_run=False, yes=True)
