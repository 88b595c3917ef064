"""Answers name the server's files relative to the project or the store, never by absolute path.

Where a server keeps its store, what its working folder is and where dokoro is installed are the
server's business: an agent on the shared HTTP server must not learn the layout of the server's
disk, and over stdio a relative path is what an agent passes back anyway. Every tool answer (its
text, its structured content and its error message) goes through :func:`shown`, which rewrites

- a path inside the server's cwd (the project) relative to it: ``dokoro/daily/….md``;
- a path inside a store outside the project relative to the store: ``daily/….md``; the store
  folder itself is "the store folder", the project folder "the project folder";
- a path inside dokoro's installation relative to it: ``dokoro_store/index/…``;
- a folder above the store or the project (below the top level) as "a folder above the store or
  the project", a path in it as ``…/rest``.

A symlink's target is never named in the first place (the store's walls say "a symlink leading out
of it"), so a link to anywhere on the disk tells the caller nothing.

Both the spelled and the resolved (symlinks followed) form of each folder are rewritten.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["Rewrite", "rewrite_for", "rewrite_of", "rewriter", "rewritten", "shown"]

Rewrite = Callable[[str], str]


@functools.lru_cache(maxsize=8)
def rewriter(root: str, cwd: str) -> Rewrite:
    """The rewrite of answers of a server whose store folder is ``root`` and cwd ``cwd``."""
    rules: dict[str, tuple[str, str]] = {}  # absolute folder -> (its name when bare, the prefix of what is in it)
    install = _install_folder()
    for folder, bare, inside in (
        (install, "dokoro's installation", ""),
        (cwd, "the project folder", ""),
    ):
        if folder:
            for spelled in {folder, os.path.realpath(folder)}:
                rules.setdefault(spelled, (bare, inside))
    for spelled in {root, os.path.realpath(root)}:
        within = _relative(spelled, cwd)
        rules[spelled] = (within, within + "/") if within else ("the store folder", "")
    # The folders above the store and the project (a store-open error names the one that is a
    # file, say): where they sit on the server's disk is not shown either. Top-level folders
    # (/tmp, /home) say nothing and are left as they are.
    for start in (root, cwd):
        for spelled in {start, os.path.realpath(start)}:
            for parent in Path(spelled).parents:
                if len(parent.parts) > 2:
                    rules.setdefault(str(parent), ("a folder above the store or the project", "…/"))
    ordered = sorted((folder for folder in rules if len(folder) > 1), key=len, reverse=True)
    if not ordered:
        return _same
    pattern = re.compile("(" + "|".join(re.escape(folder) for folder in ordered) + r")(/[^\s'\"`),;]*)?(?![\w.-])")

    def rewrite(text: str) -> str:
        if not any(folder in text for folder in ordered):
            return text

        def replace(match: re.Match[str]) -> str:
            bare, inside = rules[match.group(1)]
            rest = (match.group(2) or "").lstrip("/")
            return inside + rest if rest else bare

        return pattern.sub(replace, text)

    return rewrite


def shown(value: Any, rewrite: Rewrite) -> Any:
    """``value`` (a string, or JSON-like lists and dicts of them) with its absolute paths rewritten;
    the very same object when nothing in it named a folder (the usual answer: nothing is copied)."""
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, list):
        items = [shown(item, rewrite) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {key: shown(item, rewrite) for key, item in value.items()}
        return value if all(pairs[key] is item for key, item in value.items()) else pairs
    return value


def rewrite_of(context: Any) -> Rewrite | None:
    """The rewrite of absolute paths for the answers of this server (see :mod:`dokoro_server.shown_paths`)."""
    try:
        app = context.request_context.lifespan_context if context is not None else None
    except LookupError:  # no request
        return None
    return _app_rewrite(app)


def rewrite_for(app: Any) -> Rewrite:
    """The rewrite of the answers of the server whose state is ``app`` (an ``AppState``), also when
    its store could not be opened (the answer that says why); the identity when even its folder
    cannot be named."""
    return _app_rewrite(app) or _same


def _app_rewrite(app: Any) -> Rewrite | None:
    # The lifespan context is the kit's AppState; read by name, so this module and app.py do not
    # import each other.
    rewrite = getattr(app, "rewrite", None)
    return rewrite if callable(rewrite) else None


def rewritten(result: CallToolResult, rewrite: Rewrite) -> CallToolResult:
    """``result`` with its absolute paths rewritten (the same object when it named none)."""
    from mcp_types import TextContent

    changed = False
    content = []
    for block in result.content:
        if isinstance(block, TextContent):
            text = rewrite(block.text)
            if text is not block.text:
                block = block.model_copy(update={"text": text})
                changed = True
        content.append(block)
    structured = result.structured_content
    if structured is not None:
        shown_structured = shown(structured, rewrite)
        changed = changed or shown_structured is not structured
        structured = shown_structured
    if not changed:
        return result
    return result.model_copy(update={"content": content, "structured_content": structured})


def _same(text: str) -> str:
    return text


def _relative(path: str, base: str) -> str:
    """``path`` relative to ``base`` when it is inside it (else empty)."""
    try:
        relative = Path(path).relative_to(base)
    except ValueError:
        try:
            relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(base))
        except ValueError:
            return ""
    text = relative.as_posix()
    return "" if text == "." else text


@functools.cache
def _install_folder() -> str:
    """The folder dokoro's packages are installed in (site-packages, or a clone's ``src``)."""
    spec = importlib.util.find_spec("dokoro_store")
    if spec is None or not spec.submodule_search_locations:
        return ""
    return str(Path(next(iter(spec.submodule_search_locations))).parent)
