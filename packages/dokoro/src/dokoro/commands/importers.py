"""``dokoro migrate --from-mcp-memory FILE`` / ``--from-notes FOLDER``: move in from other memory tools.

A preview first (documents new, changed and already there, entities, relations, what was skipped
and why, each with its line or file), then, confirmed, the documents and the graph written through
the store's services in batches. Stopped half-way, the same command again continues where it
stopped. The closing line counts what was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dokoro.commands._open import open_for_command
from dokoro.commands._output import go_ahead

if TYPE_CHECKING:
    from dokoro_store import ImportSet

__all__ = ["import_from"]


def _print_skipped(console: Console, items: ImportSet) -> None:
    for reason in items.skipped:
        console.print(f"skipped: {reason}", highlight=False, markup=False)
    if (more := items.skipped_count - len(items.skipped)) > 0:
        console.print(f"skipped: … and {more:,} more", highlight=False, markup=False)


def import_from(path: Path | None, source: Path, kind: str, yes: bool, dry_run: bool) -> bool:
    """Preview and (confirmed) import ``source`` (``kind``: ``mcp-memory`` or ``notes``)."""
    from dokoro_store import DokoroError, apply_import_set, preview_of, read_knowledge_graph, read_notes_folder

    console = Console(soft_wrap=True)
    try:
        items = read_knowledge_graph(source) if kind == "mcp-memory" else read_notes_folder(source)
    except DokoroError as exc:
        console.print(f"[red]{exc}[/]", highlight=False)
        return False
    store = open_for_command(path, create=True)  # moving in may make the store it moves into
    try:
        preview = preview_of(store, items)
        table = Table(title=f"Import preview: {items.source}")
        for column in ("documents new", "changed", "already there", "entities", "relations", "skipped"):
            table.add_column(column, justify="right")
        table.add_row(
            *(
                f"{n:,}"
                for n in (
                    preview.new,
                    preview.changed,
                    preview.unchanged,
                    preview.entities,
                    preview.relations,
                    preview.skipped,
                )
            )
        )
        console.print(table)
        _print_skipped(console, items)
        if preview.new + preview.changed + preview.indexed == 0:
            console.print("Everything is already there; nothing imported.")
            return True
        if preview.unchanged and (preview.new or preview.changed):
            console.print(f"{preview.unchanged:,} document(s) are there from an earlier run: continuing after them.")
        question = f"Import {preview.new + preview.changed:,} document(s) and their graph?"
        if preview.new + preview.changed == 0:
            question = f"Index {preview.indexed:,} document(s) an earlier run left unindexed?"
        if not go_ahead(console, question, dry_run=dry_run, yes=yes, verb="imported"):
            return True
        with Progress(
            TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as bar:
            task = bar.add_task("import", total=len(items.notes))
            done = apply_import_set(store, items, progress=lambda n, _total: bar.update(task, completed=n))
    finally:
        store.close()
    console.print(
        f"Imported {done.new:,} new and {done.changed:,} changed document(s), {done.entities:,} entities, "
        f"{done.relations:,} relations recorded; {done.unchanged:,} already there"
        + (f", {done.skipped:,} line(s) or note(s) skipped." if done.skipped else "."),
        highlight=False,
    )
    return True
