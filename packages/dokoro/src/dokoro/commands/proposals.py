"""``dokoro memory proposals [list|show|approve|reject]``: the upkeep the store proposes for its
memories (merge near-duplicates, summarise episode runs, prune never-recalled memories, promote
recurring corrections to guardrails), each with its evidence. Nothing changes until approved."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import click
import typer
from rich.markup import escape

from dokoro.commands._group import LoudGroup
from dokoro.commands._open import open_for_command
from dokoro.commands._output import (
    JsonOption,
    PathOption,
    console,
    emit_json,
    id_table,
    short_time,
    stdin_is_terminal,
)

if TYPE_CHECKING:
    from dokoro_store.results.proposals import Proposal, ProposalDecision

__all__ = ["proposals_app"]

proposals_app = typer.Typer(
    help="Upkeep of the memories the store proposes (merge, summarise, prune, guardrail) and what "
    "`dokoro onboard` read in the project's files (onboard); "
    "nothing changes until you approve. Without a command: the open proposals.",
    cls=LoudGroup,
    invoke_without_command=True,
    rich_markup_mode=None,
)

ByOption = Annotated[str | None, typer.Option("--by", envvar="USER", help="Who decides (default: $USER).")]


@proposals_app.callback()
def _default(ctx: typer.Context, path: PathOption = None) -> None:
    if ctx.invoked_subcommand is None:
        proposals_list(path=path)


@proposals_app.command("list")
def proposals_list(
    status: Annotated[str, typer.Option(help="proposed (default), approved, rejected or all.")] = "proposed",
    kind: Annotated[str | None, typer.Option(help="Only merge, summarise, prune, guardrail or onboard.")] = None,
    scan: Annotated[
        bool, typer.Option("--scan/--no-scan", help="Look for new proposals first (bounded; never files one twice).")
    ] = True,
    limit: Annotated[int, typer.Option(help="At most this many.")] = 50,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """List proposals with their evidence, oldest first (the pass looks for new ones first)."""
    store = open_for_command(path)
    try:
        found = store.proposals.listing(status, kind=kind, limit=limit, scan=scan)
    finally:
        store.close()
    if json:
        emit_json(found)
        return
    out = console()
    if found.filed:
        out.print(f"{found.filed} new proposal(s) filed by this pass.")
    if not found.proposals:
        out.print(f"No {status if status != 'all' else ''} proposals.".replace("  ", " "))
        return
    rows = [(p.id, p.kind, p.status, p.title, short_time(p.decided_at or p.created_at)) for p in found.proposals]
    id_table(
        out,
        f"{len(found.proposals)} proposal(s)",
        ("id", "kind", "status", "proposal", "updated"),
        rows,
        optional=("status", "updated"),
    )
    if status == "proposed":
        out.print("Decide with `dokoro memory proposals approve ID` or `reject ID`; `show ID` for the full evidence.")


@proposals_app.command("show")
def proposals_show(
    proposal_id: Annotated[str, typer.Argument(help="The proposal id (see `dokoro memory proposals list`).")],
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Show one proposal and all its evidence."""
    store = open_for_command(path)
    try:
        proposal = store.proposals.get(proposal_id)
    finally:
        store.close()
    if json:
        emit_json(proposal)
        return
    out = console()
    out.print(f"[bold]{proposal.id}[/] ({proposal.status}, filed {short_time(proposal.created_at)})")
    for line in proposal.lines():
        out.print(line, markup=False)


def _distilled(proposal: Proposal, draft: dict[str, object], *, edit: bool, ask: bool) -> str | None:
    """The distilled text a person writes for a drafted proposal (None: keep the draft): in their
    editor (``--edit``, or answering ``e``), or typed at the prompt."""
    body = str(draft.get("body", ""))
    if not edit and ask:
        out = console()
        out.print(f"[bold]{proposal.id}[/]: {escape(proposal.title)}")
        out.print(f"Draft: {escape(str(draft.get('title', '')))}")
        for line in body.splitlines():
            out.print(f"  {line}", markup=False)
        answer = str(
            typer.prompt(
                "Write a distilled text instead? Type it on one line, e to open your editor, Enter to keep the draft",
                default="",
                show_default=False,
            )
        ).strip()
        if answer.lower() == "e":
            edit = True
        elif answer:
            return answer
    if edit:
        written = click.edit(body + "\n")
        return written.strip() if written and written.strip() != body.strip() else None
    return None


def _print_decision(done: ProposalDecision) -> None:
    out = console()
    p = done.proposal
    out.print(f"{p.status.capitalize()} {p.id} ({p.kind}): {escape(p.outcome or '')}.")
    for memory in done.created:
        out.print(f"  new {memory.type} {memory.id}: {escape(memory.title)}")
    for memory in done.changed:
        out.print(f"  {memory.id} is now {memory.state}: {escape(memory.title)}")


@proposals_app.command("approve")
def proposals_approve(
    proposal_id: Annotated[str, typer.Argument(help="The proposal id (see `dokoro memory proposals list`).")],
    text: Annotated[
        str | None,
        typer.Option(
            help="A summary's (or an onboard proposal's) distilled text, written instead of its draft "
            "(- reads it from stdin)."
        ),
    ] = None,
    title: Annotated[str | None, typer.Option(help="The summary's one-line title (default: the draft's).")] = None,
    edit: Annotated[bool, typer.Option("--edit", help="Write the distilled text in your editor, from the draft.")] = (
        False
    ),
    by: ByOption = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Approve a proposal: its change is applied and recorded with it. A summary shows its draft first
    and, at a terminal, asks whether to write a distilled text instead (or give --text / --edit)."""
    store = open_for_command(path)
    try:
        if text == "-":
            text = sys.stdin.read()
        proposal = store.proposals.get(proposal_id)
        draft = proposal.evidence.get("draft")
        if isinstance(draft, dict) and text is None:  # a proposal that writes its draft unless told otherwise
            text = _distilled(proposal, draft, edit=edit, ask=not json and stdin_is_terminal())
        done = store.proposals.approve(proposal_id, by=by, text=text, title=title)
    finally:
        store.close()
    if json:
        emit_json(done)
        return
    _print_decision(done)


@proposals_app.command("reject")
def proposals_reject(
    proposal_id: Annotated[str, typer.Argument(help="The proposal id (see `dokoro memory proposals list`).")],
    reason: Annotated[str | None, typer.Option(help="Why not (kept with the proposal).")] = None,
    by: ByOption = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Reject a proposal: nothing changes, and the same proposal is never filed again."""
    store = open_for_command(path)
    try:
        done = store.proposals.reject(proposal_id, reason=reason, by=by)
    finally:
        store.close()
    if json:
        emit_json(done)
        return
    _print_decision(done)
