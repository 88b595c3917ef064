"""Who decides what is captured: a person, in a ``.dokoro.yml`` file.

Two places hold one: the store's folder (every session captured into this store) and the
session's project folder or any folder above it (that project only, like a ``.gitignore``)::

    capture: off          # nothing of these sessions is captured (on: the default)
    exclude:              # sessions in these folders, and tool calls naming these paths, are left out
      - secrets/**
      - /home/me/clients/acme

A pattern is a glob matched against the absolute path and the path relative to the project;
a folder pattern covers what is under it. The file is a person's: read without following a
symbolic link, at most 64 KiB, as YAML without anchors (:mod:`dokoro_store.walls.frontmatter`);
an unreadable one switches capture *off* and says why, rather than capturing what someone tried
to exclude.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePath

__all__ = ["SWITCH_FILE", "CaptureSwitches", "read_switches", "write_switch"]

SWITCH_FILE = ".dokoro.yml"
_MAX_BYTES = 64 * 1024
_PARENTS = 12  # folders above the project looked at


@dataclass
class CaptureSwitches:
    """What the ``.dokoro.yml`` files in force say."""

    on: bool = True
    why_off: str | None = None
    exclude: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def excludes(self, path: str, project: str | None = None) -> bool:
        """Whether ``path`` (absolute, or relative to ``project``) falls under an exclusion."""
        if not self.exclude or not path:
            return False
        pure = PurePath(path)
        candidates = {pure.as_posix()}
        if project:
            absolute = pure if pure.is_absolute() else PurePath(project) / pure
            candidates.add(absolute.as_posix())
            with contextlib.suppress(ValueError):
                candidates.add(absolute.relative_to(project).as_posix())
        for pattern in self.exclude:
            bare = pattern.rstrip("/")
            for candidate in candidates:
                if fnmatch.fnmatchcase(candidate, bare) or fnmatch.fnmatchcase(candidate, bare + "/*"):
                    return True
                if candidate.startswith(bare.rstrip("*").rstrip("/") + "/") and "*" not in bare:
                    return True
        return False


def _read(path: Path) -> str | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        raise ValueError(f"{path} is over {_MAX_BYTES // 1024} KiB; keep a few keys in it")
    return data.decode("utf-8", errors="replace")


def _apply(switches: CaptureSwitches, path: Path, text: str) -> None:
    from dokoro_store.walls.frontmatter import FrontMatterError, load

    try:
        data = load(text) if text.strip() else {}
    except FrontMatterError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold keys (capture: off, exclude: [...])")
    switches.files.append(path)
    capture = data.get("capture", True)
    # YAML reads a bare `off` as False; a quoted "off" is a string.
    if capture is False or (isinstance(capture, str) and capture.strip().lower() in ("off", "no", "false")):
        switches.on = False
        switches.why_off = f"capture: off in {path}"
    exclude = data.get("exclude", [])
    if isinstance(exclude, str):
        exclude = [exclude]
    if not isinstance(exclude, list):
        raise ValueError(f"{path}: exclude must be a list of paths or globs")
    switches.exclude += [str(p).strip() for p in exclude if isinstance(p, str | int) and str(p).strip()][:200]


def read_switches(store_root: Path, project: Path | None) -> CaptureSwitches:
    """The switches in force for a session of ``project`` captured into the store at ``store_root``."""
    switches = CaptureSwitches()
    places = [store_root / SWITCH_FILE]
    if project is not None:
        folder = project
        for _ in range(_PARENTS):
            places.append(folder / SWITCH_FILE)
            if folder.parent == folder:
                break
            folder = folder.parent
    for path in dict.fromkeys(places):
        try:
            text = _read(path)
            if text is not None:
                _apply(switches, path, text)
        except ValueError as exc:
            switches.on = False
            switches.why_off = f"capture is off until this is fixed: {exc}"
    return switches


def write_switch(folder: Path, on: bool) -> Path:
    """Set ``capture:`` in ``folder``'s ``.dokoro.yml`` (created if missing; other keys kept)."""
    from dokoro_store.walls.files import atomic_write_text

    path = folder / SWITCH_FILE
    text = _read(path) or ""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("capture:")]
    lines.insert(0, f"capture: {'on' if on else 'off'}")
    atomic_write_text(path, "\n".join(lines).rstrip("\n") + "\n", within=folder)
    return path
