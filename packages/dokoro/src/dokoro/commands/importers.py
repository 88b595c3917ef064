"""``dokoro migrate --from-mcp-memory FILE`` / ``--from-notes FOLDER``: move in from other memory tools.

A preview first (documents new, changed and already there, entities, relations, what was skipped
and why), then, confirmed, the documents and the graph written through the store's services.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from dokoro.commands._open import open_for_command
from dokoro.commands._output import go_ahead

__all__ = ["import_from"]


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
        for column in ("documents new", "changed", "already there", "entities", "relations"):
            table.add_column(column, justify="right")
        table.add_row(
            str(preview.new),
            str(preview.changed),
            str(preview.unchanged),
            str(preview.entities),
            str(preview.relations),
        )
        console.print(table)
        for reason in items.skipped:
            console.print(f"skipped: {reason}", highlight=False, markup=False)
        if preview.new + preview.changed == 0:
            console.print("Everything is already there; nothing imported.")
            return True
        question = f"Import {preview.new + preview.changed} document(s) and their graph?"
        if not go_ahead(console, question, dry_run=dry_run, yes=yes, verb="imported"):
            return True
        done = apply_import_set(store, items)
    finally:
        store.close()
    console.print(
        f"Imported {done.new} new and {done.changed} changed document(s), {done.entities} entities, "
        f"{done.relations} relations; {done.unchanged} already there.",
        highlight=False,
    )
    return True
