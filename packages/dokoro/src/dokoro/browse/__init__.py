"""``dokoro browse``: the store in the terminal (a Textual app), or a summary when not on a terminal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["run_browse"]


def run_browse(path: Path | None, category: str | None, as_json: bool, editor: Sequence[str] = ("vi",)) -> int:
    """Run the browser (or print the summary / JSON); the process exit code. ``editor``: the
    command line that edits a memory's file."""
    from dokoro.browse._run import run

    return run(path, category, as_json, editor)
