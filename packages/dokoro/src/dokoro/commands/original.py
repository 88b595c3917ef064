"""``dokoro migrate --from-original <folder>``: move in from a store the original dokoro wrote.

A preview first (what the original holds, where it goes), then, confirmed, the move: into the
same folder (converted in place, backed up first: what opening it does anyway) or into the
store this command names (another folder, a team database), where a second run adds nothing.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from dokoro.commands._open import open_for_command, settings_for
from dokoro.commands._output import go_ahead

__all__ = ["migrate_from_original"]


def migrate_from_original(path: Path | None, folder: Path, yes: bool, dry_run: bool) -> bool:
    """Preview, confirm and move in; False when ``folder`` holds no original store or it failed."""
    from dokoro_server.app import store_root
    from dokoro_store import (
        Clock,
        DokoroError,
        StorePaths,
        find_conversion,
        import_original,
        is_original_database,
        preview_original,
    )

    console = Console(soft_wrap=True)
    source = folder.expanduser().resolve()
    settings = settings_for(path)
    target = store_root(settings, Path.cwd())
    in_place = source == target and settings.database_url is None
    now = Clock().now()
    try:
        contents, database = preview_original(source, now)
    except DokoroError as exc:
        console.print(f"[red]{exc}[/]", highlight=False)
        return False
    table = Table(title=f"The original dokoro store {source}")
    table.add_column("what")
    table.add_column("count", justify="right")
    for kind, count in contents.counts.items():
        table.add_row(kind.replace("_", " "), str(count))
    console.print(table)
    for note in contents.notes:
        console.print(f"note: {note}", highlight=False)
    live = is_original_database(StorePaths(source).sqlite_file)
    if in_place and not live:
        done = find_conversion(source)
        when = done[1].get("converted_at") if done else None
        console.print(
            f"{source} was converted already{f' on {when}' if when else ''}; the original's database is kept in "
            f"{done[0] if done else database.parent}. Nothing to do.",
            highlight=False,
        )
        return True
    where = "this folder, converted in place (the original's database and files backed up first)"
    if not in_place:
        where = "the store " + ((settings.database_url and "of DOKORO_DATABASE_URL") or str(target))
    console.print(f"Moving in to {where}.", highlight=False)
    if not go_ahead(console, "Move in?", dry_run=dry_run, yes=yes):
        return True
    if in_place:
        store = open_for_command(path)  # opening converts it (and verifies the counts)
        try:
            moved = store.moved_in
        finally:
            store.close()
        if moved is None:
            console.print(f"{source} was converted by another process meanwhile; nothing to do.", highlight=False)
            return True
        console.print(
            f"Converted in {moved.seconds:.1f} s: {moved.imported} row(s), every count verified. "
            f"The original's database and files are backed up in {moved.backup}.",
            highlight=False,
        )
        return True
    store = open_for_command(path, create=True)  # moving in may make the store it moves into
    try:
        moved = import_original(source, store.db, now)
    finally:
        store.close()
    console.print(
        f"Imported {moved.imported} row(s); {moved.already_there} already there, {moved.conflicts} conflict(s) "
        "left as they are (this store's version kept).",
        highlight=False,
    )
    return moved.conflicts == 0
