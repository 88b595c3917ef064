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
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = [
    "JsonOption",
    "PathOption",
    "ago",
    "console",
    "emit_json",
    "go_ahead",
    "id_table",
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
_SHORT = {
    "slot",
    "status",
    "type",
    "kind",
    "updated",
    "created",
    "priority",
    "estimate",
    "actual",
    "state",
    "trust",
    "by",
    "relevance",
}
_NARROWEST_TEXT = 20  # a text column (title, why) narrower than this reads as a word per line


def id_table(
    out: Console,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    optional: Sequence[str] = (),
) -> None:
    """Print ``rows`` under ``columns`` so that every id stays whole on one line (copyable), at
    80 columns too: ids and short columns never wrap, text columns wrap at words; the ``optional``
    columns are left out, last first, until the text has room; when even that leaves no room (a
    long id), each row is printed as its id on one line and the rest indented below it. Cells are
    plain text (markup is not read)."""
    keep = list(columns)
    for dropped in [None, *reversed(optional)]:
        if dropped is not None and dropped in keep:
            keep.remove(dropped)
        if _needed(keep, columns, rows) <= out.width:
            break
    else:
        _stacked(out, title, columns, rows)
        return
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in keep:
        if column == "id" or column in _SHORT:
            table.add_column(column, no_wrap=True, min_width=len(column))
        else:
            table.add_column(column, overflow="fold", min_width=min(_NARROWEST_TEXT, _widest(column, columns, rows)))
    at = [columns.index(column) for column in keep]
    for row in rows:
        table.add_row(*(Text(row[i]) for i in at))
    out.print(table)


def _widest(column: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    at = columns.index(column)
    return max([len(column), *(len(row[at]) for row in rows)])


def _needed(keep: Sequence[str], columns: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """The width the table needs: whole ids and short cells, and room for the text columns."""
    width = 0
    for column in keep:
        widest = _widest(column, columns, rows)
        width += widest if column == "id" or column in _SHORT else min(_NARROWEST_TEXT, widest)
    return width + 3 * (len(keep) - 1)  # a column's padding on each side and the rule between


def _stacked(out: Console, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Each row as its id on a line of its own, then every other cell, indented and wrapped at words."""
    import textwrap

    out.print(Text(title, style="italic"))
    id_at = columns.index("id") if "id" in columns else 0
    width = max(out.width, 40)
    for row in rows:
        out.print(Text(row[id_at], style="bold"), soft_wrap=True)
        details = " · ".join(row[i] for i in range(len(columns)) if i != id_at and row[i] and row[i] != "-")
        if details:
            out.print(
                Text(textwrap.fill(details, width, initial_indent="    ", subsequent_indent="    ")), soft_wrap=True
            )


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
