"""``dokoro cleanup``: duplicate and old markdown files to the archive, a backup first."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from dokoro.commands._open import open_for_command
from dokoro.commands._output import JsonOption, PathOption, console, emit_json

__all__ = ["cleanup"]


def cleanup(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show what would move.")] = False,
    older_than: Annotated[int, typer.Option("--older-than", help="Days without change that make a file old.")] = 180,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Move without asking.")] = False,
    rollback: Annotated[
        Path | None, typer.Option("--rollback", help="Undo a cleanup: the manifest it wrote (.dokoro/backup/).")
    ] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Move duplicate files and files untouched for 180 days to archive/ (backup and manifest first)."""
    out = console()
    store = open_for_command(path)
    try:
        if rollback is not None:
            report = store.cleanup.rollback(rollback)
        else:
            with out.status("Scanning the folder…", spinner="dots"):
                report = store.cleanup.scan(older_than)
            if not report.moves or dry_run:
                report = report.model_copy(update={"dry_run": dry_run})
            elif yes or typer.confirm(f"Move {len(report.moves)} file(s) to the archive (backup first)?", err=True):
                with out.status("Backing up and moving…", spinner="dots"):
                    report = store.cleanup.run(older_than)
            else:
                out.print("Nothing moved.")
                return
    finally:
        store.close()
    if json:
        emit_json(report)
        return
    for group in report.duplicates if rollback is None else ():
        out.print(f"duplicate of {escape(group.keep)}: {escape(', '.join(group.duplicates))}")
    for old in report.old_files if rollback is None else ():
        out.print(f"old ({old.age_days} days): {escape(old.path)}")
    verb = "would move" if report.dry_run else ("moved back" if rollback else "moved")
    for move in report.moves:
        out.print(f"{verb} {escape(move.source)} → {escape(move.target)}")
    for error in report.errors:
        out.print(f"[red]error[/] {escape(error)}")
    if not report.moves and not report.errors:
        out.print("Nothing to clean up." if rollback is None else "Nothing moved back.")
    if report.backup:
        out.print(f"Backup: {report.backup}")
    if report.manifest and rollback is None:
        out.print(f"Undo with: dokoro cleanup --rollback {report.manifest}")
    if report.errors:
        raise typer.Exit(1)
