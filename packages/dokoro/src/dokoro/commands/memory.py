"""``dokoro memory list|show|forget`` and ``dokoro rules``: the typed memories agents keep.

The group is where the memory-file commands land next (``edit``, ``reindex``, ``approve|reject``):
each is one more function here, on the same ``memory_app``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from dokoro.commands._group import group
from dokoro.commands._open import open_for_command
from dokoro.commands._output import JsonOption, PathOption, console, emit_json, short_time

if TYPE_CHECKING:
    from dokoro_store.results.memories import Memory

__all__ = ["memory_app", "rules"]

memory_app = group("The typed memories agents keep (facts, decisions, rules, ...).")

STATES = ("active", "archived", "deprecated")


def memory_json(memory: Memory) -> dict[str, Any]:
    """The memory as the API speaks it (``YYYY-MM-DDTHH:MM:SSZ`` times)."""
    return memory.model_dump(mode="json")


@memory_app.command("list")
def memory_list(
    memory_type: Annotated[
        list[str] | None, typer.Option("--type", help="Only this type (repeat for several).")
    ] = None,
    state: Annotated[str, typer.Option(help="active (default), archived, deprecated or all.")] = "active",
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """List memories, newest first."""
    from dokoro_store.errors import InvalidArgumentError
    from dokoro_store.services.memories import MEMORY_TYPES

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
    table = Table(title=f"{len(memories)} memory(ies)", title_justify="left")
    for column in ("id", "type", "title", "trust", "state", "updated"):
        table.add_column(column, overflow="fold", no_wrap=column in ("id", "slot", "updated", "type", "status"))
    for m in memories:
        table.add_row(m.id, m.type, escape(m.title), m.trust, m.state, short_time(m.updated_at))
    out.print(table)


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
    memory_id: Annotated[str, typer.Argument(help="The memory id.")],
    reason: Annotated[str | None, typer.Option(help="Why it no longer holds (required unless --purge).")] = None,
    purge: Annotated[bool, typer.Option("--purge", help="Delete it for good instead of deprecating it.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Purge without asking.")] = False,
    path: PathOption = None,
) -> None:
    """Deprecate a memory (kept, with the reason), or purge it for good."""
    store = open_for_command(path)
    try:
        if purge and not yes:
            memory = store.memories.get(memory_id)
            if not typer.confirm(f"Delete memory {memory.id} ({memory.title!r}) for good?"):
                console().print("Nothing deleted.")
                return
        memory, what = store.memories.forget(memory_id, reason=reason, purge=purge, confirm=purge)
    finally:
        store.close()
    console().print(f"Memory {memory.id} {what}.")


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
