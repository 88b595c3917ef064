"""Entering ``dokoro browse``: the app on a terminal, a summary when piped, JSON with ``--json``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dokoro.browse.data import Category, category_by_id, load_items, summaries, unknown_category
from dokoro.commands._open import open_for_command

__all__ = ["run"]

if TYPE_CHECKING:
    from dokoro_store import Store


def run(path: Path | None, category: str | None, as_json: bool, editor: Sequence[str] = ("vi",)) -> int:
    """The exit code: 0, or 1 for an unknown category with ``--json`` or off a terminal."""
    chosen = category_by_id(category) if category else None
    if category and chosen is None and (as_json or not (sys.stdin.isatty() and sys.stdout.isatty())):
        sys.stderr.write(f"dokoro: {unknown_category(category)}\n")
        return 1
    store = open_for_command(path)
    try:
        root = str(store.paths.root)
        if as_json:
            if chosen is None:
                doc = {"dokoroPath": root, "categories": [s.to_json() for s in summaries(store)]}
            else:
                doc = {
                    "dokoroPath": root,
                    "category": chosen.id,
                    "items": [i.to_json() for i in load_items(store, chosen)],
                }
            sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            return 0
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return _summary(store, category, chosen)
        from dokoro.browse.app import BrowseApp

        BrowseApp(store, category=category, editor=editor).run()
        return 0
    finally:
        store.close()


def _summary(store: Store, category: str | None, chosen: Category | None) -> int:
    out = sys.stdout
    out.write(f"dokoro {store.paths.root}\n")
    if chosen is not None:
        items = load_items(store, chosen)
        out.write(f"{chosen.label} ({len(items)})\n")
        for item in items:
            out.write(f"  {item.label}  {item.sublabel}".rstrip() + "\n")
        if not items:
            out.write("  (nothing)\n")
        return 0
    for summary in summaries(store):
        out.write(f"  {summary.label:<24} {summary.count:>5}\n")
    out.write("(not a terminal: run `dokoro browse` in one to browse interactively)\n")
    return 0
