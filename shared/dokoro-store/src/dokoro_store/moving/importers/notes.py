"""A folder of markdown notes with front matter: basic-memory's and Obsidian's.

Each note becomes a document (its text, searchable) about one graph entity (the note's title, of
the front matter's ``type`` when that is one of the graph's types, else a concept). Links become
relations: ``[[Other note]]`` (Obsidian, basic-memory) → ``links_to``; basic-memory's relation
lines ``- implements [[Auth Service]]`` → ``implements``. The folder is a person's: scanned behind
the walls (no symlink followed, hidden folders such as ``.obsidian`` skipped, bounded size), front
matter loaded with the store's safe YAML loader.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dokoro_store.clock import parse_iso
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.moving.importers.items import ImportedNote, ImportSet, entity_type_of, relation_type_of, slug_of
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
    """The notes of ``folder`` (nothing written)."""
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise InvalidArgumentError(f"no folder of notes at {folder}; pass the vault or basic-memory project folder")
    items = ImportSet(source=str(folder), format="notes")
    found: list[tuple[Path, str, dict[str, Any], str]] = []
    for path in scan(folder, folder, skip_dir=lambda name: name.startswith(".")):
        relative = path.relative_to(folder).as_posix()
        if path.stat().st_size > MAX_NOTE_BYTES:
            items.skipped.append(f"{relative}: larger than {MAX_NOTE_BYTES // 2**20} MB")
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            items.skipped.append(f"{relative}: not UTF-8 text")
            continue
        meta, body = frontmatter.parse(text)
        if frontmatter.split(text)[0] is not None and not meta:
            items.skipped.append(f"{relative}: front matter not readable (kept the text, no metadata)")
        found.append((path, relative, meta, body))
    # A link names a note by its title or its file name: both resolve to that note's entity.
    titles: dict[str, tuple[str, str]] = {}
    for path, relative, meta, body in found:
        title = _title(meta, body, path)
        kind = entity_type_of(meta.get("type") if isinstance(meta.get("type"), str) else None)
        for name in (title, path.stem, relative.removesuffix(".md")):
            titles[name.lower()] = (kind, title)
    for path, relative, meta, body in found:
        title = _title(meta, body, path)
        kind = entity_type_of(meta.get("type") if isinstance(meta.get("type"), str) else None)
        links: list[tuple[str, str, str]] = []
        typed: set[str] = set()
        for match in _RELATION_LINE.finditer(body):
            relation = relation_type_of(match.group(1))
            target = match.group(2).strip()
            if relation is None:
                continue
            target_type, target_name = _resolve(titles, target)
            links.append((relation, target_type, target_name))
            typed.add(target.lower())
        for match in _WIKILINK.finditer(body):
            target = match.group(1).strip()
            if target.lower() in typed:
                continue
            target_type, target_name = _resolve(titles, target)
            if ("links_to", target_type, target_name) not in links:
                links.append(("links_to", target_type, target_name))
        items.notes.append(
            ImportedNote(
                doc_id=f"note-{slug_of(relative.removesuffix('.md'))}",
                title=title,
                content=body.strip() + "\n",
                filepath=f"notes://{folder.name}/{relative}",
                entity_type=kind,
                entity_name=title,
                links=links,
                tags=_tags(meta.get("tags")),
                written=_when(meta, path),
                kind=str(meta.get("type") or "note"),
            )
        )
    return items


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
