"""Grep-style search and listing of the workspace markdown (``search_dokoros``, ``list_recent_dokoros``).

These read the files themselves, not the index: a case-insensitive substring of the title or
body, front-matter tag filters, newest file first (reference §2.12).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dokoro_store.errors import InvalidArgumentError
from dokoro_store.results.search import MarkdownHit
from dokoro_store.semantic.documents.markdown import IGNORED_DIRS
from dokoro_store.walls import frontmatter
from dokoro_store.walls.containment import plain_file, scan

__all__ = ["RECENT_TYPES", "SEARCH_TYPES", "MarkdownHit", "recent_markdown", "search_markdown"]

SEARCH_TYPES = ("insights", "decisions", "features", "daily", "current", "all")
RECENT_TYPES = ("posts", "ideas", "features", "all")
_RECENT_FOLDERS = {"posts": "posts", "ideas": "ideas-to-verify", "features": "features"}
_H1 = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
EXCERPT = 200


def _walk(root: Path, base: Path) -> Iterator[Path]:
    """Markdown files under ``base``; symlinks and special files are skipped (:func:`walls.scan`)."""
    return scan(root, base, skip_dir=lambda name: name in IGNORED_DIRS or name.startswith("."))


def _parse(text: str) -> tuple[dict[str, Any], str]:
    data, body = frontmatter.parse(text)
    raw, _ = frontmatter.split(text)
    if raw is not None and not data:
        # The reference's YAML fix-up retry: tabs and unquoted colons in values break strict YAML.
        fixed = "\n".join(_quote_value(line) for line in raw.replace("\t", "  ").splitlines())
        data, _ = frontmatter.parse(f"---\n{fixed}\n---\n")
    return data, body


def _quote_value(line: str) -> str:
    match = re.match(r"^(\s*[\w-]+):\s+(.*:.*)$", line)
    if match and not match.group(2).startswith(("'", '"', "[", "{")):
        return f'{match.group(1)}: "{match.group(2).replace(chr(34), chr(39))}"'
    return line


def _as_set(value: Any) -> set[str]:
    if isinstance(value, list | tuple | set):
        return {str(v).strip().lower() for v in value}
    return {str(value).strip().lower()}


def tags_match(front_tags: Any, wanted: dict[str, Any]) -> bool:
    """Every wanted key exists in the front-matter tags and its value equals or overlaps."""
    if isinstance(front_tags, list):
        front_tags = {"tags": front_tags}
    if not isinstance(front_tags, dict):
        return False
    for key, value in wanted.items():
        if key not in front_tags:
            return False
        if not (_as_set(front_tags[key]) & _as_set(value)):
            return False
    return True


def _front_tags(value: Any) -> dict[str, Any] | list[Any] | str | None:
    """The front matter's tags as written; a scalar YAML gave (a number, a date) as its text."""
    if value is None or isinstance(value, dict | list | str):
        return value
    return str(value)


def _hit(root: Path, path: Path, data: dict[str, Any], body: str) -> MarkdownHit:
    title = data.get("title")
    if not title:
        h1 = _H1.search(body)
        title = h1.group(1) if h1 else path.stem
    text = re.sub(r"\s+", " ", body).strip()
    excerpt = text[:EXCERPT] + ("..." if len(text) > EXCERPT else "")
    modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return MarkdownHit(
        file=path.relative_to(root).as_posix(),
        title=str(title),
        excerpt=excerpt,
        tags=_front_tags(data.get("tags")),
        last_modified=modified,
    )


def search_markdown(
    root: Path, query: str = "", type_: str = "all", limit: int = 10, tags: dict[str, Any] | None = None
) -> list[MarkdownHit]:
    """Markdown files whose title or body contains ``query`` (any, when empty), newest first."""
    if type_ not in SEARCH_TYPES:
        raise InvalidArgumentError(f"type must be one of {', '.join(SEARCH_TYPES)}; got {type_!r}")
    if not 1 <= limit <= 100:
        raise InvalidArgumentError(f"limit must be between 1 and 100; got {limit}")
    if type_ == "current":
        files = [root / "current.md"] if plain_file(root, root / "current.md") else []
    elif type_ == "all":
        files = list(_walk(root, root))
    else:
        files = list(_walk(root, root / type_))
    needle = query.strip().lower()
    hits: list[MarkdownHit] = []
    for path in files:
        try:
            data, body = _parse(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        hit = _hit(root, path, data, body)
        if needle and needle not in body.lower() and needle not in hit.title.lower():
            continue
        if tags and not tags_match(data.get("tags"), tags):
            continue
        hits.append(hit)
    hits.sort(key=lambda h: (h.last_modified, h.file), reverse=True)
    return hits[:limit]


def recent_markdown(root: Path, now: datetime, days: int = 7, type_: str = "all") -> list[MarkdownHit]:
    """Markdown files modified within ``days``, newest first (``all`` = every markdown file of the folder)."""
    if type_ not in RECENT_TYPES:
        raise InvalidArgumentError(f"type must be one of {', '.join(RECENT_TYPES)}; got {type_!r}")
    if not 1 <= days <= 3650:
        raise InvalidArgumentError(f"days must be between 1 and 3650; got {days}")
    base = root if type_ == "all" else root / _RECENT_FOLDERS[type_]
    cutoff = now - timedelta(days=days)
    hits: list[MarkdownHit] = []
    for path in _walk(root, base):
        try:
            if datetime.fromtimestamp(path.stat().st_mtime, UTC) < cutoff:
                continue
            data, body = _parse(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        hits.append(_hit(root, path, data, body))
    hits.sort(key=lambda h: (h.last_modified, h.file), reverse=True)
    return hits
