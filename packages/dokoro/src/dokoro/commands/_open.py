"""Opening the store for a command, the same way the servers do."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # typing only: the commands import the store and the kit when they run
    from dokoro_server import DokoroSettings
    from dokoro_store import Store

__all__ = ["holds_memory_files", "open_for_command", "require_store", "settings_for"]


def settings_for(path: Path | None, database_url: str | None = None, embedder: str | None = None) -> DokoroSettings:
    from dokoro_server.settings import DokoroSettings

    overrides: dict[str, Any] = {}
    if embedder is not None:
        overrides["embedder"] = embedder
    if path is not None:
        overrides["path"] = path
    if database_url is not None:
        overrides["database_url"] = database_url
    return DokoroSettings(**overrides)


def open_for_command(
    path: Path | None, database_url: str | None = None, embedder: str | None = None, *, create: bool = False
) -> Store:
    """The store named by ``--path``/``DOKORO_PATH`` and ``DOKORO_DATABASE_URL``; exits 2 with the
    reason when it cannot be opened. ``embedder`` overrides ``DOKORO_EMBEDDER`` (``dokoro reembed``).

    Only ``dokoro init`` and the servers (``create``) make a store: any other command on a folder
    without one says where it looked and how to make one, and exits 1, having created nothing;
    the same for a team database (``DOKORO_DATABASE_URL``) that holds no dokoro schema.
    """
    from dokoro_server.app import open_store_or_exit

    # A command is a person's, whatever DOKORO_AGENT_ID the shell carries: what it changes in the
    # memory files is made with a person's rights (docs/memory-files.md).
    settings = settings_for(path, database_url, embedder).model_copy(update={"agent_id": "unknown"})
    cwd = Path.cwd()
    if not create and settings.database_url is None:
        require_store(settings, path, cwd)
    store: Store = open_store_or_exit(settings, cwd, create=create)
    return store


def holds_memory_files(path: Path | None) -> bool:
    """Whether the store folder the settings name holds a ``memories/`` folder (a clone of a project
    whose memory files came along): a rebuild from them may create the store."""
    from dokoro_server.app import store_root

    try:
        return (store_root(settings_for(path), Path.cwd()) / "memories").is_dir()
    except OSError:
        return False


def require_store(settings: DokoroSettings, path: Path | None, cwd: Path) -> None:
    """Exit 1 with one line unless the folder the settings name holds a dokoro store."""
    from dokoro_server.app import store_root
    from dokoro_store import StorePaths

    root = store_root(settings, cwd)
    if path is not None:
        where, create = "--path", f"`dokoro init --path {root}`"
    elif settings.path is not None:
        where, create = "DOKORO_PATH", f"`dokoro init` (it creates {root})"
    elif root == cwd.resolve():
        where, create = "this folder: a folder named dokoro is its own store", f"`dokoro init` (it makes {root} one)"
    else:
        where, create = f"the default ./dokoro of {cwd}", f"`dokoro init` (it creates {root})"
    try:
        found = StorePaths(root).sqlite_file.is_file()
        not_a_folder = root.exists() and not root.is_dir()
    except OSError as exc:
        _fail(f"cannot look at {root} ({where}): {exc.strerror or exc}")
    if not_a_folder:
        _fail(f"{root} ({where}) is a file, not a dokoro folder; point --path or DOKORO_PATH at a dokoro folder")
    if not found:
        _fail(
            f"no dokoro store at {root} ({where}); create one with {create}, "
            "or point --path or DOKORO_PATH at an existing one"
        )


def _fail(message: str) -> NoReturn:
    import typer

    typer.echo(f"dokoro: {message}", err=True)
    raise typer.Exit(1)
