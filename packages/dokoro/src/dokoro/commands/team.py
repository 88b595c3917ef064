"""Moving and backing up a store: ``dokoro store migrate``, ``dokoro export``, ``dokoro import``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from dokoro.commands._open import open_for_command
from dokoro.commands._output import go_ahead

__all__ = ["export_backup", "import_backup", "migrate_store"]


def migrate_store(path: Path | None, to_url: str, from_url: str | None) -> bool:
    """Copy every table of the current store to ``to_url``; True when every table verified."""
    from dokoro_store import Store, copy_store, describe_url, normalise_url, write_gitignore

    console = Console(soft_wrap=True)
    source = open_for_command(path, from_url)
    target_url = to_url
    if "://" not in to_url:  # a folder: its embedded SQLite file
        folder = Path(to_url).expanduser().resolve()
        target_url = f"sqlite:///{folder / '.dokoro' / 'db' / 'dokoro.sqlite'}"
        folder.mkdir(parents=True, exist_ok=True)
        write_gitignore(folder)  # a new store folder: git keeps its markdown, never its database
    try:
        target = Store.open(source.paths.root, database_url=target_url)
    except Exception:
        source.close()
        raise
    where = describe_url(normalise_url(target_url))
    console.print(f"Copying {source.db.dialect} store {source.paths.root} → {where}")
    try:
        with Progress(
            TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(), console=console
        ) as progress:
            tasks: dict[str, TaskID] = {}

            def report(table: str, done: int, total: int) -> None:
                if table not in tasks:
                    tasks[table] = progress.add_task(table, total=max(total, 1))
                progress.update(tasks[table], completed=done if total else 1)

            reports = copy_store(source.db, target.db, progress=report)
    finally:
        target.close()
        source.close()
    table = Table(title="Verification")
    for column in ("table", "source rows", "target rows", "checksum", "verified"):
        table.add_column(column)
    for r in reports:
        table.add_row(
            r.table, str(r.source_rows), str(r.target_rows), r.source_checksum[:12], "yes" if r.verified else "NO"
        )
    console.print(table)
    ok = all(r.verified for r in reports)
    console.print("All tables verified; the source is unchanged." if ok else "Some tables did not verify.")
    return ok


def export_backup(path: Path | None, out: Path | None) -> Path:
    from dokoro_store import export_store

    store = open_for_command(path)
    try:
        folder = (out or store.paths.data_dir / "backup").expanduser().resolve()
        folder.mkdir(parents=True, exist_ok=True)
        written, counts = export_store(store.db, folder, store.clock.now())
    finally:
        store.close()
    typer.echo(f"Backup written: {written}")
    for name, count in counts.items():
        typer.echo(f"  {name:<24} {count} row(s)")
    return written


def import_backup(path: Path | None, file: Path, yes: bool, dry_run: bool) -> int:
    """Preview, then (with confirmation) insert the new rows of a backup; returns how many."""
    from dokoro_store import apply_import, load_backup, plan_import

    console = Console(soft_wrap=True)
    store = open_for_command(path)
    try:
        plan = plan_import(store.db, load_backup(file))
        table = Table(title=f"Import preview: {file.name}")
        for column in ("table", "new", "duplicates (skipped)", "conflicts (kept as is)"):
            table.add_column(column)
        for t in plan.tables:
            table.add_row(t.table, str(len(t.new)), str(t.duplicates), str(len(t.conflicts)))
        console.print(table)
        if plan.redacted:
            from dokoro_store import Redaction

            console.print(
                Redaction("", plan.redacted)
                .notice()
                .replace("before storing", "found in the backup; importing them redacted")
            )
        if plan.unknown_tables:
            console.print(f"Ignored tables this dokoro does not know: {', '.join(plan.unknown_tables)}")
        for conflict in plan.conflicts:
            differing = ", ".join(conflict.differing)
            console.print(f"[yellow]conflict[/] {conflict.table} {conflict.key}: differs in {differing}")
            for column in conflict.differing:
                console.print(f"    here:   {conflict.ours.get(column)!r}")
                console.print(f"    backup: {conflict.theirs.get(column)!r}")
        if plan.new_rows == 0 and not plan.conflicts:
            console.print(f"Everything in the backup is already there ({plan.duplicates} row(s)); nothing imported.")
            return 0
        if plan.new_rows == 0:
            console.print("Nothing imported.")
            return 0
        if not go_ahead(console, f"Import {plan.new_rows} new row(s)?", dry_run=dry_run, yes=yes, verb="imported"):
            return 0
        with Progress(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(), console=console) as bar:
            tasks = {t.table: bar.add_task(t.table, total=max(len(t.new), 1)) for t in plan.tables if t.new}

            def report(table: str, done: int, total: int) -> None:
                if table in tasks:
                    bar.update(tasks[table], completed=max(done, 1) if total else 1)

            inserted = apply_import(store.db, plan, progress=report)
    finally:
        store.close()
    console.print(
        f"Imported {inserted} row(s); {plan.duplicates} duplicate(s) skipped, "
        f"{len(plan.conflicts)} conflict(s) left for you to resolve."
    )
    return inserted
