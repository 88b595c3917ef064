"""``dokoro onboard``: a project's own files proposed as typed memories, for a person to approve.

It reads the project's README, package manifests, CI workflows, Makefile and lint configuration
(the store does: no symlink followed, sizes bounded, secrets redacted), files each draft as an
``onboard`` proposal and, at a terminal, asks about each: approve it, edit it first (in your
editor), reject it, or leave it for later (``dokoro memory proposals``). ``--yes`` approves every
draft as it is; ``--dry-run`` only shows them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer
from rich.markup import escape

from dokoro.commands._open import open_for_command
from dokoro.commands._output import JsonOption, PathOption, console, emit_json, stdin_is_terminal

if TYPE_CHECKING:
    from dokoro_store import Store
    from dokoro_store.results.onboarding import Onboarding, OnboardingDraft
    from rich.console import Console

__all__ = ["onboard"]

ByOption = Annotated[str | None, typer.Option("--by", envvar="USER", help="Who approves (default: $USER).")]


def onboard(
    project: Annotated[
        Path | None, typer.Option("--project", help="The project's folder (default: the current folder).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show what would be proposed.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve every draft as it is, without asking.")] = False,
    by: ByOption = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Read this project's README, manifests, CI, Makefile and lint config; propose its stack, commands,
    conventions and guardrails as typed memories, and ask which to keep."""
    folder = (project or Path.cwd()).expanduser().resolve()
    store = open_for_command(path)
    try:
        report = store.onboarding.preview(folder) if dry_run else store.onboarding.propose(folder)
        out = console()
        if not json:
            _show(out, report)
        decided = 0
        if not dry_run and (yes or (stdin_is_terminal() and not json)):
            for draft in report.drafts:
                if draft.proposal and draft.status == "proposed":
                    decided += _decide(out, store, draft, yes=yes, by=by, quiet=json)
        if json:
            after = store.onboarding.preview(folder)
            emit_json(report.model_copy(update={"drafts": after.drafts}))
            return
        waiting = sum(1 for d in report.drafts if d.status == "proposed") - decided
        if dry_run:
            out.print("Dry run: nothing filed. Run `dokoro onboard` to propose them.")
        elif waiting > 0:
            out.print(
                f"{waiting} proposal(s) wait for a decision: `dokoro memory proposals list --kind onboard`, "
                "`dokoro memory proposals approve ID [--text ...]`."
            )
    finally:
        store.close()


def _show(out: Console, report: Onboarding) -> None:
    out.print(f"Read {len(report.files)} file(s) of [bold]{escape(report.name)}[/]: {escape(', '.join(report.files))}")
    for where, why in report.skipped.items():
        out.print(f"  skipped {escape(where)}: {escape(why)}")
    if not report.preview:
        out.print(
            f"{report.filed} proposal(s) filed"
            + (f", {report.withdrawn} of an earlier reading withdrawn." if report.withdrawn else ".")
        )
    if not report.drafts:
        out.print("Nothing to propose: no README, manifest, CI, Makefile or lint configuration found.")
    for draft in report.drafts:
        status = f" [{draft.status}: {draft.proposal}]" if draft.proposal else ""
        out.print(f"\n[bold]{escape(draft.type)}: {escape(draft.title)}[/]{escape(status)}")
        out.print(draft.body, markup=False)
        out.print(f"(from {escape(', '.join(draft.sources))})")


def _decide(out: Console, store: Store, draft: OnboardingDraft, *, yes: bool, by: str | None, quiet: bool) -> int:
    """Approve, edit, reject or leave one draft's proposal; 1 when it was decided."""
    assert draft.proposal is not None
    text: str | None = None
    if not yes:
        answer = (
            str(
                typer.prompt(
                    f"{draft.type} “{draft.title}”: [a]pprove, [e]dit then approve, [r]eject, [s]kip",
                    default="s",
                    show_default=False,
                )
            )
            .strip()
            .lower()[:1]
        )
        if answer == "s" or answer not in "aer":
            return 0
        if answer == "r":
            done = store.proposals.reject(draft.proposal, reason="not kept at onboarding", by=by)
            out.print(f"  rejected {done.proposal.id}")
            return 1
        if answer == "e":
            edited = click.edit(draft.body + "\n")
            text = edited.strip() if edited and edited.strip() != draft.body.strip() else None
    done = store.proposals.approve(draft.proposal, by=by, text=text)
    if not quiet:
        for memory in done.created:
            out.print(f"  approved: new {memory.type} {memory.id}")
    return 1
