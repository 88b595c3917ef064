"""``dokoro init``: lay out a dokoro folder and create its database."""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["init_store"]


def init_store(path: Path | None = None, *, cwd: Path | None = None) -> Path:
    """Create the folder layout at ``path`` (default: ``DOKORO_PATH``, else ``./dokoro``) and open
    the store once so its database exists and is migrated. Prints what it did; returns the folder."""
    from dokoro_server import DokoroSettings
    from dokoro_store import Clock, Store, init_folder, resolve_dokoro_path

    settings = DokoroSettings(path=path) if path is not None else DokoroSettings()
    root = resolve_dokoro_path(str(settings.path) if settings.path else None, cwd or Path.cwd())
    done = init_folder(root, Clock())
    if done.created:
        typer.echo(f"Created the dokoro folder {root}")
        typer.echo(f"  folders: {', '.join(done.folders)}")
        typer.echo("  files:   README.md, .gitignore, current.md, .config/search-mode")
    else:
        typer.echo(f"The dokoro folder {root} is already set up; its files were left untouched.")
    with Store.open(root, database_url=settings.database_url) as store:
        database = "the database at DOKORO_DATABASE_URL" if settings.database_url else str(store.paths.sqlite_file)
    typer.echo(f"Database ready: {database}")
    from dokoro_server.entry import registration_lines

    typer.echo("Next: register the server with your agent (from this project's folder, so its store is this one):")
    for line in registration_lines("dokoro"):
        typer.echo(line)
    return root
