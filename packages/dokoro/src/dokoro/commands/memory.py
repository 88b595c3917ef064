"""``dokoro memory list|show|edit|forget|approve|reject|reindex`` and ``dokoro rules``: the typed
memories agents keep, and their markdown files under ``memories/``.

Every command that opens the store reconciles the memory files first (a person's edits become
new versions); ``edit`` opens ``$VISUAL``/``$EDITOR`` on one memory's file and says what the
reconcile made of the edit; ``reindex`` rebuilds the rows and the index from the files.
"""

from __future__ import annotations

import shlex
import subprocess
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from dokoro.commands._group import group
from dokoro.commands._open import open_for_command
from dokoro.commands._output import (
    EditorOption,
    JsonOption,
    PathOption,
    console,
    emit_json,
    id_table,
    short_time,
    stdin_is_terminal,
)

if TYPE_CHECKING:
    from dokoro_store.results.memories import FilesSync, Memory

__all__ = ["memory_app", "rules"]

memory_app = group("The typed memories agents keep (facts, decisions, rules, ...).")

STATES = ("active", "archived", "deprecated", "proposed")


def memory_json(memory: Memory) -> dict[str, Any]:
    """The memory as the API speaks it (``YYYY-MM-DDTHH:MM:SSZ`` times)."""
    return memory.model_dump(mode="json")


@memory_app.command("list")
def memory_list(
    memory_type: Annotated[
        list[str] | None, typer.Option("--type", help="Only this type (repeat for several).")
    ] = None,
    state: Annotated[
        str, typer.Option(help="active (default), archived, deprecated, proposed (waiting for review) or all.")
    ] = "active",
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """List memories, newest first."""
    from dokoro_store import MEMORY_TYPES, InvalidArgumentError

    states = STATES if state == "all" else (state,)
    if state != "all" and state not in STATES:
        raise InvalidArgumentError(f"--state must be one of {', '.join(STATES)} or all; got {state!r}")
    for kind in memory_type or ():
        if kind not in MEMORY_TYPES:
            raise InvalidArgumentError(f"--type must be one of {', '.join(MEMORY_TYPES)}; got {kind!r}")
    store = open_for_command(path)
    try:
        memories = store.memories.of_types(memory_type or MEMORY_TYPES, states)
    finally:
        store.close()
    if json:
        emit_json([memory_json(m) for m in memories])
        return
    out = console()
    if not memories:
        out.print(f"No {state if state != 'all' else ''} memories.".replace("  ", " "))
        return
    rows = [(m.id, m.type, m.title, m.trust, m.state, short_time(m.updated_at)) for m in memories]
    id_table(
        out,
        f"{len(memories)} memory(ies)",
        ("id", "type", "title", "trust", "state", "updated"),
        rows,
        optional=("state", "trust", "updated"),
    )


@memory_app.command("show")
def memory_show(
    memory_id: Annotated[str, typer.Argument(help="The memory id (see `dokoro memory list`).")],
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Show one memory in full."""
    store = open_for_command(path)
    try:
        memory = store.memories.get(memory_id)
    finally:
        store.close()
    if json:
        emit_json(memory_json(memory))
        return
    out = console()
    out.print(f"[bold]{escape(memory.title)}[/]  [dim]({memory.id})[/]")
    fields = [
        ("type", memory.type),
        ("trust", memory.trust),
        ("state", memory.state + (f" ({memory.state_reason})" if memory.state_reason else "")),
        ("entities", ", ".join(memory.entities) or "-"),
        ("agent", memory.agent_id or "-"),
        ("created", short_time(memory.created_at)),
        ("updated", short_time(memory.updated_at)),
        ("supersedes", memory.supersedes or "-"),
        ("superseded by", memory.superseded_by or "-"),
        ("recalled", f"{memory.recall_count} time(s)"),
    ]
    for label, value in fields:
        out.print(f"  {label:<13} {escape(value)}")
    out.print()
    out.print(memory.body, markup=False)


@memory_app.command("forget")
def memory_forget(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory id (see `dokoro memory list`).")],
    reason: Annotated[str | None, typer.Option(help="Why it no longer holds (required unless --purge).")] = None,
    purge: Annotated[bool, typer.Option("--purge", help="Delete it for good instead of deprecating it.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Purge without asking.")] = False,
    path: PathOption = None,
) -> None:
    """Deprecate a memory (kept, with the reason), or purge it for good."""
    if not purge and not (reason and reason.strip()):
        typer.echo(
            f'dokoro: say why it no longer holds: dokoro memory forget {memory_id.strip()} --reason "…" '
            f"(kept, with its history), or delete it for good: dokoro memory forget {memory_id.strip()} --purge --yes",
            err=True,
        )
        raise typer.Exit(2)
    store = open_for_command(path)
    try:
        if purge and not yes:
            memory = store.memories.get(memory_id)
            if not stdin_is_terminal():
                typer.echo(
                    f"dokoro: nothing deleted: there is no terminal to ask on; "
                    f"run dokoro memory forget {memory.id} --purge --yes",
                    err=True,
                )
                raise typer.Exit(1)
            if not typer.confirm(f"Delete memory {memory.id} ({memory.title}) for good?"):
                console().print("Nothing deleted.")
                return
        memory, done = store.memories.forget(memory_id, reason=reason, purge=purge, confirm=purge)
    finally:
        store.close()
    out = console()
    if done.action == "purged":
        out.print(f"Deleted memory {memory.id} ({escape(memory.title)}) for good.")
    else:
        out.print(f"Deprecated memory {memory.id} ({escape(memory.title)}): {escape(memory.state_reason or '')}.")
    if done.dependents_flagged:
        out.print(
            f"{len(done.dependents_flagged)} memory(ies) depending on it are now stale: "
            f"{', '.join(done.dependents_flagged)} (see `dokoro memory review`)."
        )


def _print_sync(synced: FilesSync, quiet_message: str) -> None:
    out = console()
    if synced.quiet:
        out.print(quiet_message)
        return
    for line in synced.lines():
        out.print(line, markup=False)


@memory_app.command("edit")
def memory_edit(
    memory_id: Annotated[str, typer.Argument(help="The memory id (see `dokoro memory list`).")],
    editor: EditorOption = "vi",
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Open a memory's markdown file in your editor; your edit becomes a new version when you save
    (trust user-stated, checked against close memories), or changes its state (front matter)."""
    store = open_for_command(path)
    try:
        file = store.memories.file_of(memory_id)
        command = [*shlex.split(editor), str(file)]
        try:
            finished = subprocess.run(command, check=False)
        except FileNotFoundError:
            typer.echo(f"dokoro: editor {command[0]!r} not found; set $EDITOR or pass --editor", err=True)
            raise typer.Exit(2) from None
        if finished.returncode != 0:
            typer.echo(
                f"dokoro: the editor exited with {finished.returncode}; nothing reconciled now "
                "(a saved change is picked up by the next memory command or tool call)",
                err=True,
            )
            raise typer.Exit(1)
        synced = store.memories.sync_files()
    finally:
        store.close()
    if json:
        emit_json({"file": str(file), "sync": synced})
        return
    _print_sync(synced, f"No change to {memory_id.strip()} ({file}).")


@memory_app.command("approve")
def memory_approve(
    memory_id: Annotated[
        str, typer.Argument(help="The id of a proposed memory (`dokoro memory list --state proposed`).")
    ],
    by: Annotated[str | None, typer.Option("--by", envvar="USER", help="Who approves (default: $USER).")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Approve a memory an agent proposed (review queue): it becomes active."""
    store = open_for_command(path)
    try:
        done = store.memories.approve(memory_id, by=by)
    finally:
        store.close()
    if json:
        emit_json(done)
        return
    out = console()
    out.print(f"Approved {done.memory.id}: {escape(done.memory.title)} (now active).")
    if done.superseded is not None:
        out.print(f"It supersedes {done.superseded.id} ({escape(done.superseded.title)}), now archived.")


@memory_app.command("reject")
def memory_reject(
    memory_id: Annotated[
        str, typer.Argument(help="The id of a proposed memory (`dokoro memory list --state proposed`).")
    ],
    reason: Annotated[str | None, typer.Option(help="Why it is wrong (kept with the memory).")] = None,
    by: Annotated[str | None, typer.Option("--by", envvar="USER", help="Who rejects (default: $USER).")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Reject a memory an agent proposed: it is deprecated with the reason (kept, never shown as truth)."""
    store = open_for_command(path)
    try:
        done = store.memories.reject(memory_id, reason=reason, by=by)
    finally:
        store.close()
    if json:
        emit_json(done)
        return
    why = escape(done.memory.state_reason or "")
    console().print(f"Rejected {done.memory.id}: {escape(done.memory.title)} (deprecated: {why}).")


@memory_app.command("reindex")
def memory_reindex(
    full: Annotated[bool, typer.Option("--full", help="Re-embed every memory, not only the changed ones.")] = False,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Rebuild the memories' rows and search index from their files under memories/, forward only (a file
    older than its memory is written again from the database). On a clone with memory files and no
    database yet, the store is created first."""
    from rich.console import Console

    from dokoro.commands._open import holds_memory_files
    from dokoro.commands.index import progress_bar

    store = open_for_command(path, create=holds_memory_files(path))
    try:
        with progress_bar(Console(stderr=True, soft_wrap=True), "memory reindex") as progress:
            report = store.memories.reindex_from_files(full=full, progress=progress, actor=None)
    finally:
        store.close()
    if json:
        emit_json(report)
        return
    out = console()
    out.print(
        f"{report.files} file(s): {report.unchanged} unchanged, {report.updated} edit(s) taken in, "
        f"{report.restored} restored, {report.created} new, {report.behind} behind the database (written again "
        f"from it), {report.removed} removed (purged), {report.skipped} skipped; {report.indexed} indexed; "
        f"{report.rows_without_file} memory(ies) without a file (kept, rendered again)"
    )
    if report.links or report.verdicts or report.uses or report.purges:
        out.print(
            f"Brought back: {report.links} depends_on link(s), {report.verdicts} verdict(s), {report.uses} use "
            f"counter(s), {report.purges} purge record(s)."
        )
    for change in report.changes:
        if change.action not in ("behind", "created"):
            out.print(f"- {change.path}: {change.message}", markup=False)
    for problem in [*report.problems, *report.duplicates]:
        out.print(f"- {problem.path}: skipped ({problem.reason})", markup=False)


def rules(json: JsonOption = False, path: PathOption = None) -> None:
    """The rules and guardrails every briefing carries (guardrails first)."""
    store = open_for_command(path)
    try:
        found = store.memories.of_types(["rule", "guardrail"])
    finally:
        store.close()
    found.sort(key=lambda m: m.type != "guardrail")
    if json:
        emit_json([memory_json(m) for m in found])
        return
    out = console()
    if not found:
        out.print("No rules or guardrails yet. Agents add them with dokoro_remember (type rule or guardrail).")
        return
    for m in found:
        out.print(f"[bold]{m.type}[/] {escape(m.title)}  [dim]({m.id})[/]")
        out.print(f"  {escape(' '.join(m.body.split()))}")
