"""What every command prints with: one console, ``--json`` output, short dates and the shared options."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

__all__ = [
    "JsonOption",
    "PathOption",
    "ago",
    "console",
    "emit_json",
    "folding_table",
    "go_ahead",
    "short_time",
    "stdin_is_terminal",
]

PathOption = Annotated[
    Path | None,
    typer.Option(
        "--path",
        help="The dokoro folder (default: $DOKORO_PATH, else ./dokoro).",
        file_okay=False,
        resolve_path=True,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (for scripts) instead of text.")]
EditorOption = Annotated[
    str,
    typer.Option(
        "--editor",
        envvar=["VISUAL", "EDITOR"],
        help="The editor a memory's file opens in (default: $VISUAL, $EDITOR, else vi).",
    ),
]


def console() -> Console:
    """Rich honours NO_COLOR and stops colouring when stdout is not a terminal."""
    return Console(soft_wrap=True, highlight=False)


def stdin_is_terminal() -> bool:
    """Whether a question can be asked: stdin is a terminal (not a pipe, a file or a CI runner)."""
    return sys.stdin.isatty()


def go_ahead(out: Console, question: str, *, dry_run: bool, yes: bool, verb: str = "changed") -> bool:
    """Whether a command that has shown its preview should make the change: never on ``--dry-run``,
    at once with ``--yes``, else the person's answer; what is not done is said ("Nothing changed.").
    Without ``--yes`` and no terminal to ask on (a script, a pipe), nothing is done and the command
    exits 1 saying how to go ahead: a script never changes a store by accident, nor thinks it did."""
    if dry_run:
        out.print(f"Dry run: nothing {verb}.")
        return False
    if not yes and not stdin_is_terminal():
        out.print(
            f"Nothing {verb}: there is no terminal to ask on. Run it again with --yes to go ahead "
            "(or --dry-run to only see what it would do)."
        )
        raise typer.Exit(1)
    if not yes and not typer.confirm(question):
        out.print(f"Nothing {verb}.")
        return False
    return True


# Columns that stay on one line (a status, a time, a count): never wrapped, never cut.
_SHORT = {"slot", "status", "type", "updated", "priority", "estimate", "actual", "state", "trust"}


def folding_table(title: str, columns: Sequence[str]) -> Table:
    """A table that fits the terminal (80 columns included): short columns keep their width,
    ids fold onto several lines and text columns wrap at words."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        if column in _SHORT:
            table.add_column(column, no_wrap=True, min_width=len(column))
        elif column == "id":
            table.add_column(column, overflow="fold", min_width=10)
        else:
            table.add_column(column, overflow="fold", min_width=min(len(column) + 2, 12))
    return table


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def emit_json(value: BaseModel | Sequence[Any] | dict[str, Any]) -> None:
    """One JSON document on stdout: a result model, a list of them, or a dict holding them."""
    sys.stdout.write(json.dumps(_plain(value), indent=2, ensure_ascii=False) + "\n")


def short_time(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def ago(seconds: float) -> str:
    """``45s``, ``12m``, ``3h``, ``5d``: how long ago, for humans."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"
