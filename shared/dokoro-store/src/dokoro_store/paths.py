"""Where a store lives: the workspace folder and everything under it (reference §1.3, §3.3)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["StorePaths", "damaged_database", "damaged_message", "resolve_dokoro_path", "unusable_folder"]


def resolve_dokoro_path(env_value: str | None, cwd: Path) -> Path:
    """Resolve the workspace folder the way the reference does.

    ``DOKORO_PATH`` when set; else ``<cwd>/dokoro``, except when the cwd is itself named
    ``dokoro`` and holds no nested ``dokoro/`` folder, in which case the cwd is the store. A
    repository's root named ``dokoro`` (a clone of dokoro itself) is a project, not a store: its
    store is ``./dokoro`` unless the folder already holds one.
    """
    if env_value:
        return Path(env_value).expanduser().resolve()
    cwd = cwd.resolve()
    nested = (cwd / "dokoro").is_dir()
    a_project = (cwd / ".git").exists() and not (cwd / ".dokoro").is_dir()
    if cwd.name == "dokoro" and not nested and not a_project:
        return cwd
    return cwd / "dokoro"


@dataclass(frozen=True)
class StorePaths:
    """Every well-known path of one workspace folder."""

    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / ".dokoro"

    @property
    def db_dir(self) -> Path:
        return self.data_dir / "db"

    @property
    def sqlite_file(self) -> Path:
        return self.db_dir / "dokoro.sqlite"

    @property
    def mcp_dir(self) -> Path:
        return self.root / ".mcp"

    @property
    def current_md(self) -> Path:
        return self.root / "current.md"

    @property
    def workspace_lock(self) -> Path:
        return self.mcp_dir / "workspace.lock"

    @property
    def session_json(self) -> Path:
        return self.mcp_dir / "session.json"

    @property
    def daily_dir(self) -> Path:
        return self.root / "daily"

    @property
    def assets_dir(self) -> Path:
        return self.root / "assets"

    @property
    def locks_dir(self) -> Path:
        """Sidecar lock files that serialise read-modify-write of shared files across processes."""
        return self.mcp_dir / "locks"

    def inside(self, path: Path, *, what: str = "path") -> Path:
        """``path`` resolved, refused (:class:`~dokoro_store.errors.OutsideStoreError`) when it or a
        symlink on it leads out of the workspace folder (:func:`dokoro_store.walls.containment.inside`)."""
        # Imported here: the servers read this module's resolve_dokoro_path before they answer
        # tools/list, and nothing more of the store may load by then (tests/test_architecture.py).
        from dokoro_store.walls.containment import inside

        return inside(self.root, path, what=what)

    def relative(self, path: Path) -> str:
        """POSIX path relative to the workspace root (for display and docs rows); a path whose real
        target is outside the folder is refused, never shown as if it were inside."""
        return self.inside(path).relative_to(self.root.resolve()).as_posix()


def unusable_folder(root: Path, error: OSError) -> str:
    """One line saying why the store folder ``root`` cannot be used, and what to do (``error`` is
    what opening it raised)."""
    if _not_a_folder(root):
        return f"{root} is a file, not a dokoro folder: point DOKORO_PATH (or --path) at a folder"
    blocked = next((parent for parent in root.parents if _not_a_folder(parent)), None)
    if blocked is not None:
        return f"{root} cannot be a dokoro folder: {blocked} is a file; point DOKORO_PATH (or --path) at a folder"
    reason = error.strerror or str(error)
    where = f" ({error.filename})" if error.filename else ""
    if isinstance(error, PermissionError) or error.errno in (1, 13, 30):  # EPERM, EACCES, EROFS
        if _is_folder(root):
            return (
                f"the store at {root} is read-only{where}: dokoro writes to its store even to read it (the "
                "database's log and lock files); give this user write access, or copy the folder somewhere writable"
            )
        return f"cannot create the dokoro folder {root}: {reason}; point DOKORO_PATH (or --path) at a writable place"
    return f"cannot use the dokoro folder {root}: {reason}{where}"


def _not_a_folder(path: Path) -> bool:
    """Something other than a folder is at ``path`` (a file, a device)."""
    try:
        return path.exists() and not path.is_dir()
    except OSError:
        return False


def _is_folder(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


# What SQLite says of a file that is not (or no longer) a database it can read.
_DAMAGED = ("malformed", "not a database", "file is encrypted", "disk image")


def damaged_database(error: BaseException) -> bool:
    """Whether ``error`` (SQLite's, through SQLAlchemy) says the database file itself is damaged."""
    return any(words in str(error) for words in _DAMAGED)


def damaged_message(paths: StorePaths, error: BaseException) -> str:
    """One line saying the store's database file is damaged, and what to do."""
    orig = getattr(error, "orig", None) or error
    return (
        f"the database {paths.sqlite_file.relative_to(paths.root)} of {paths.root} is damaged ({orig}): dokoro "
        "cannot read it and changed nothing. Keep a copy of it, then put back a good copy, or `dokoro import` a "
        "backup into a new store (move the damaged file aside first)"
    )
