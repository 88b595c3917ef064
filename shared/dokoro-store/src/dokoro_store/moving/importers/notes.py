"""A folder of markdown notes with front matter: basic-memory's and Obsidian's.

Each note becomes a document (its text, searchable) about one graph entity (the note's title, of
the front matter's ``type`` when that is one of the graph's types, else a concept). Links become
relations: ``[[Other note]]`` (Obsidian, basic-memory) → ``links_to``; basic-memory's relation
lines ``- implements [[Auth Service]]`` → ``implements``. The folder is a person's: scanned behind
the walls (no symlink followed, hidden folders such as ``.obsidian`` skipped, bounded size), front
matter loaded with the store's safe YAML loader; a note's links are bounded (:data:`~.items.MAX_LINKS`,
the text keeps them all) and a note no database can hold (a NUL, a lone surrogate) is skipped with why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dokoro_store.clock import parse_iso
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.moving.importers.items import (
    MAX_LINKS,
    MAX_NAME_CHARS,
    ImportedNote,
    ImportSet,
    bad_text,
    entity_type_of,
    relation_type_of,
)
from dokoro_store.moving.importers.names import slug_of
from dokoro_store.walls import frontmatter
from dokoro_store.walls.containment import scan

__all__ = ["MAX_NOTE_BYTES", "read_notes_folder"]

MAX_NOTE_BYTES = 2 * 1024 * 1024
_WIKILINK = re.compile(r"\[\[([^\]\|#\n]+)(?:#[^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]")
# basic-memory: "- relation_type [[Target]]" (a list item whose first words name the relation)
_RELATION_LINE = re.compile(r"^\s*[-*]\s+([A-Za-z][\w -]{0,40}?)\s+\[\[([^\]\|#\n]+)", re.MULTILINE)
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return [t.strip().lstrip("#") for t in value.replace(",", " ").split() if t.strip()]
    if isinstance(value, list):
        return [str(t).strip().lstrip("#") for t in value if isinstance(t, str | int) and str(t).strip()]
    return []


def _when(meta: dict[str, Any], path: Path) -> datetime:
    for key in ("created", "date", "created_at"):
        value = meta.get(key)
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
        if value is not None:
            try:
                return parse_iso(str(value))
            except ValueError:
                continue
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def read_notes_folder(folder: Path) -> ImportSet:
    """The notes of ``folder`` (nothing written), in path order."""
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise InvalidArgumentError(f"no folder of notes at {folder}; pass the vault or basic-memory project folder")
    items = ImportSet(source=str(folder), format="notes", prefix="note-")
    found = [note for path in scan(folder, folder, skip_dir=_hidden) if (note := _read(folder, path, items))]
    items.lines = len(found)
    # A link names a note by its title or its file name: both resolve to that note's entity.
    titles: dict[str, tuple[str, str]] = {}
    for read in found:
        for name in (read.title, read.path.stem, read.relative.removesuffix(".md")):
            titles[name.lower()] = (read.kind, read.title)
    for read in found:
        links, left_out = _links(read.body, titles)
        if left_out:
            items.skip(
                f"{read.relative}: more than {MAX_LINKS:,} links; {left_out:,} left out of the graph (kept in the text)"
            )
        items.notes.append(
            ImportedNote(
                key=read.relative,
                slug=slug_of(read.relative.removesuffix(".md")),
                title=read.title,
                content=read.body.strip() + "\n",
                filepath=f"notes://{folder.name}/{read.relative}",
                entity_type=read.kind,
                entity_name=read.title,
                links=links,
                tags=_tags(read.meta.get("tags")),
                written=_when(read.meta, read.path),
                kind=str(read.meta.get("type") or "note")[:100],
            )
        )
    return items


def _hidden(name: str) -> bool:
    return name.startswith(".")


@dataclass(frozen=True)
class _Read:
    path: Path
    relative: str
    meta: dict[str, Any]
    body: str
    title: str
    kind: str


def _read(folder: Path, path: Path, items: ImportSet) -> _Read | None:
    """One note, or None (skipped, with why)."""
    relative = path.relative_to(folder).as_posix()
    if (why := bad_text(relative)) is not None:
        items.skip(f"{relative.encode('utf-8', 'replace').decode('utf-8')}: a file name with {why}")
        return None
    try:
        size = path.stat().st_size
    except OSError as exc:
        items.skip(f"{relative}: not readable ({exc.strerror or exc})")
        return None
    if size > MAX_NOTE_BYTES:
        items.skip(f"{relative}: larger than {MAX_NOTE_BYTES // 2**20} MB")
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        items.skip(f"{relative}: not UTF-8 text")
        return None
    except OSError as exc:
        items.skip(f"{relative}: not readable ({exc.strerror or exc})")
        return None
    if (why := bad_text(text)) is not None:
        items.skip(f"{relative}: text with {why}")
        return None
    meta, body = frontmatter.parse(text)
    if frontmatter.split(text)[0] is not None and not meta:
        items.skip(f"{relative}: front matter not readable (kept the text, no metadata)")
    meta = _clean(meta)
    title = " ".join(_title(meta, body, path).split()) or relative
    if len(title) > MAX_NAME_CHARS:
        title = title[: MAX_NAME_CHARS - 1] + "…"
    kind = entity_type_of(meta.get("type") if isinstance(meta.get("type"), str) else None)
    return _Read(path, relative, meta, body, title, kind)


def _clean(meta: dict[str, Any]) -> dict[str, Any]:
    """The front matter's keys whose values hold storable text (a lone surrogate escaped into YAML
    drops its key)."""
    return {k: v for k, v in meta.items() if not (isinstance(v, str) and bad_text(v))}


def _links(body: str, titles: dict[str, tuple[str, str]]) -> tuple[list[tuple[str, str, str]], int]:
    """A note's links (typed relation lines first, then wikilinks), each once, at most
    :data:`MAX_LINKS`; and how many more were left out."""
    links: dict[tuple[str, str, str], None] = {}
    typed: set[str] = set()
    left_out = 0

    def add(link: tuple[str, str, str]) -> None:
        nonlocal left_out
        if link in links:
            return
        if len(links) >= MAX_LINKS:
            left_out += 1
            return
        links[link] = None

    for match in _RELATION_LINE.finditer(body):
        relation = relation_type_of(match.group(1))
        target = match.group(2).strip()
        if relation is None or not target:
            continue
        add((relation, *_resolve(titles, target[:MAX_NAME_CHARS])))
        typed.add(target.lower())
    for match in _WIKILINK.finditer(body):
        target = match.group(1).strip()
        if not target or target.lower() in typed:
            continue
        add(("links_to", *_resolve(titles, target[:MAX_NAME_CHARS])))
    return list(links), left_out


def _resolve(titles: dict[str, tuple[str, str]], target: str) -> tuple[str, str]:
    """The note a link names (by title, file name or path, a vault-relative path matching by its
    last part), else a concept of that name."""
    found = titles.get(target.lower()) or titles.get(target.rsplit("/", 1)[-1].lower())
    return found or ("concept", target)


def _title(meta: dict[str, Any], body: str, path: Path) -> str:
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    heading = _H1.search(body)
    return heading.group(1).strip() if heading else path.stem
