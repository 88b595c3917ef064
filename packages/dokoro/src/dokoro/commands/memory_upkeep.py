"""``dokoro memory review|renew|types``: a person's upkeep of the memories.

- ``review``: the health line, the stale memories with why (past a date, or a dependency retired),
  the proposed memories waiting for approval and the open upkeep proposals;
- ``renew ID``: push ``review_after`` / ``valid_until`` forward (and confirm the memory still holds
  although a memory it depends on was retired), or ``--retire --reason`` it (its dependents become stale);
- ``types``: show the per-type switches, or set them (``dokoro memory types preference --agents-write off``,
  ``dokoro memory types episode --off``: the type not used at all, hidden from recall and the briefing).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dokoro.commands._open import open_for_command
from dokoro.commands._output import JsonOption, PathOption, console, emit_json, id_table, short_time
from dokoro.commands.memory import memory_app

__all__ = ["memory_renew", "memory_review", "memory_types"]

ByOption = Annotated[str | None, typer.Option("--by", envvar="USER", help="Who changes them (default: $USER).")]


@memory_app.command("review")
def memory_review(
    limit: Annotated[int, typer.Option(help="Stale memories listed at most (all are counted).")] = 200,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """What waits for upkeep: stale memories, proposed memories and open proposals."""
    store = open_for_command(path)
    try:
        review = store.upkeep.review(limit=limit)
    finally:
        store.close()
    if json:
        emit_json(review)
        return
    out = console()
    out.print(escape(review.health or "memory health: nothing waits for review"))
    if review.stale:
        rows = [
            (
                e.memory.id,
                e.memory.type,
                e.memory.agent_id or "-",
                e.memory.title,
                e.stale,
                short_time(e.memory.updated_at),
            )
            for e in review.stale
        ]
        id_table(
            out,
            f"{review.stale_total} stale memory(ies)",
            ("id", "type", "by", "title", "why", "updated"),
            rows,
            optional=("by", "updated"),
        )
        out.print(
            "Renew with `dokoro memory renew ID --review-after YYYY-MM-DD` (or --valid-until), "
            'or retire with `dokoro memory renew ID --retire --reason "..."`.'
        )
    if review.pending:
        pending = [(m.id, m.type, m.agent_id or "-", m.title, short_time(m.created_at)) for m in review.pending]
        id_table(
            out,
            f"{len(review.pending)} proposed memory(ies)",
            ("id", "type", "by", "title", "created"),
            pending,
            optional=("by", "created"),
        )
        out.print("Approve or reject with `dokoro memory approve ID` / `dokoro memory reject ID`.")
    if review.proposals:
        counts = ", ".join(f"{kind} {count}" for kind, count in sorted(review.proposals.items()))
        out.print(f"Open proposals: {counts}: `dokoro memory proposals`.")


@memory_app.command("renew")
def memory_renew(
    memory_id: Annotated[str, typer.Argument(help="The memory id (see `dokoro memory review`).")],
    review_after: Annotated[
        str | None, typer.Option("--review-after", help="New date to re-check it (ISO, later than now).")
    ] = None,
    valid_until: Annotated[
        str | None, typer.Option("--valid-until", help="New date after which it no longer holds (ISO).")
    ] = None,
    retire: Annotated[bool, typer.Option("--retire", help="Retire it instead (deprecated, history kept).")] = False,
    reason: Annotated[str | None, typer.Option(help="Why it no longer holds (with --retire).")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Renew a stale memory (dates pushed forward, dependencies confirmed), or retire it."""
    from dokoro_store import InvalidArgumentError

    if reason is not None and not retire:
        raise InvalidArgumentError("--reason goes with --retire (why the memory no longer holds); nothing changed")
    store = open_for_command(path)
    try:
        done = store.upkeep.renew(
            memory_id, review_after=review_after, valid_until=valid_until, retire=retire, reason=reason
        )
    finally:
        store.close()
    if json:
        emit_json(done)
        return
    out = console()
    m = done.memory
    if done.action == "retired":
        out.print(f"Retired {m.id}: {escape(m.title)} (deprecated: {escape(m.state_reason or '')}).")
        if done.dependents_flagged:
            out.print(f"Now stale until renewed (they depend on it): {', '.join(done.dependents_flagged)}.")
        return
    out.print(f"Renewed {m.id}: {escape(m.title)}.")
    if done.stale:
        out.print(f"Still {escape(done.stale)}.")


def _switch(value: str | None, name: str) -> bool | None:
    from dokoro_store import InvalidArgumentError

    if value is None:
        return None
    if value.lower() in ("on", "yes", "true"):
        return True
    if value.lower() in ("off", "no", "false"):
        return False
    raise InvalidArgumentError(f"{name} must be on or off; got {value!r}")


@memory_app.command("types")
def memory_types(
    types: Annotated[
        list[str] | None, typer.Argument(help="The types to change (e.g. preference episode); none: show them.")
    ] = None,
    agents_write: Annotated[
        str | None, typer.Option("--agents-write", help="on/off: whether agents may remember these types.")
    ] = None,
    needs_review: Annotated[
        str | None, typer.Option("--needs-review", help="on/off: whether agents' memories of them wait for review.")
    ] = None,
    enabled: Annotated[
        bool | None,
        typer.Option(
            "--on/--off",
            help="Use these types or not at all: off, they are refused on write and hidden from recall, "
            "search and the briefing (nothing is deleted).",
        ),
    ] = None,
    by: ByOption = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Show or set which memory types are in use, which agents may write and which wait for review."""
    from dokoro_store import InvalidArgumentError

    write, review = _switch(agents_write, "--agents-write"), _switch(needs_review, "--needs-review")
    changes = (write, review, enabled)
    if not types and any(c is not None for c in changes):
        raise InvalidArgumentError("name the types to change, e.g. `dokoro memory types preference --agents-write off`")
    if types and all(c is None for c in changes):
        raise InvalidArgumentError("say what to change: --on|--off, --agents-write on|off and/or --needs-review on|off")
    store = open_for_command(path)
    try:
        switches = (
            store.upkeep.switches.set(types, agents_write=write, needs_review=review, enabled=enabled, by=by)
            if types
            else store.upkeep.switches.all()
        )
    finally:
        store.close()
    if json:
        emit_json(
            {
                s.type: {"enabled": s.enabled, "agents_write": s.agents_write, "needs_review": s.needs_review}
                for s in switches
            }
        )
        return
    out = console()
    rows = [
        (
            s.type,
            "yes" if s.enabled else "OFF (hidden)",
            "on" if s.agents_write else "OFF",
            "yes" if s.needs_review else "no",
            s.changed_by or "-",
        )
        for s in switches
    ]
    id_table(out, "memory types", ("type", "in use", "agents write", "needs review", "changed by"), rows)
    if not types:
        out.print("Change with `dokoro memory types TYPE... --on|--off --agents-write on|off --needs-review on|off`.")
