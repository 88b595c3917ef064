"""The paths of file claims: root-relative, lexically normalised, compared case-insensitively.

Paths are normalised lexically (os.path.normpath), as the reference does: pathlib has no
lexical ".." folding, and resolve() would follow symlinks and differ between machines.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dokoro_store.errors import InvalidArgumentError

__all__ = ["MAX_PATHS", "ClaimTarget", "clean_root", "normalise_claim_path", "normalise_claim_paths"]

MAX_PATHS = 50


@dataclass(frozen=True)
class ClaimTarget:
    """A normalised path: ``path`` is root-relative POSIX (case kept), ``key`` its lower case."""

    path: str
    key: str


def clean_root(root: Path | str) -> str:
    """The claim root as an absolute, lexically normalised path."""
    text = unicodedata.normalize("NFC", str(root)).replace("\\", "/")
    return os.path.normpath(os.path.abspath(text))  # noqa: PTH100 - lexical, see above


def normalise_claim_path(raw: str, root: str) -> ClaimTarget | str:
    """A target under ``root`` (a :func:`clean_root`), or the reason the path is refused."""
    if not isinstance(raw, str) or not raw.strip():
        return "empty path"
    text = unicodedata.normalize("NFC", raw).replace("\\", "/")
    if "\x00" in text:
        return "contains a NUL character"
    full = os.path.normpath(text if os.path.isabs(text) else os.path.join(root, text))  # noqa: PTH117, PTH118
    if full == root:
        return "is the root itself; name a file or folder inside it"
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not full.startswith(prefix):
        return f"is outside the root {root}"
    relative = full[len(prefix) :].replace(os.sep, "/")
    return ClaimTarget(relative, relative.lower())


def normalise_claim_paths(paths: Sequence[str], root: Path | str, *, verb: str = "file_claim") -> list[ClaimTarget]:
    """Root-relative targets, duplicates (by key) collapsed; any invalid path refuses them all."""
    if not paths:
        raise InvalidArgumentError(f"{verb}: paths must name at least one path")
    if len(paths) > MAX_PATHS:
        raise InvalidArgumentError(f"{verb}: at most {MAX_PATHS} paths per call; got {len(paths)}")
    base = clean_root(root)
    targets: dict[str, ClaimTarget] = {}
    invalid: list[str] = []
    for raw in paths:
        normalised = normalise_claim_path(raw, base)
        if isinstance(normalised, str):
            invalid.append(f"{raw!r} ({normalised})")
        else:
            targets.setdefault(normalised.key, normalised)
    if invalid:
        nothing = "NOTHING was claimed" if verb == "file_claim" else "nothing was released"
        raise InvalidArgumentError(
            f"{verb} rejected — {nothing}. Invalid path(s): {'; '.join(invalid)}. "
            "Paths are files or folders inside the root (relative to it, or absolute under it)."
        )
    return list(targets.values())
