"""``memories/dictionary.md``: the synonyms of an entity, mapped to one name.

Agents and people name one thing many ways (``pg``, ``postgres``, ``PostgreSQL``). A person
lists each entity once, with its other names, in the format of the memory-mcp dictionary::

    - postgres: the team database (aka: pg, postgresql)
    - auth-service (aka: auth, login service)

The name is the text before ``:`` (or before the parentheses); the synonyms are the
comma-separated list after ``aka:``. Everything else in the file (headings, prose) is ignored.
Names compare as the store compares entities (lower case, whitespace collapsed). A synonym
listed twice keeps its first entity. Lines in fenced code blocks and HTML comments are examples,
not entries.

The dictionary is applied on every write (a memory's entities are stored under their names)
and every query (recall's entity filter, the entities of memories stored before a synonym
was listed, and the query's words: a synonym in it brings its name along). It is re-read only
when its modification time or size changes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dokoro_store.semantic.memories.rows import canonical_entities
from dokoro_store.walls import containment as walls
from dokoro_store.walls.files import atomic_write_text

__all__ = ["DICTIONARY_FILE", "STARTER", "EntityDictionary", "parse_dictionary"]

DICTIONARY_FILE = "dictionary.md"
STARTER = """# Entity dictionary

One line per entity: its name, what it is, and its other names after `aka:`. dokoro stores and
searches memories under the name, whichever synonym an agent or a person used.

For example (lines inside a fenced block like this one are not read):

```
- postgres: the team database (aka: pg, postgresql)
- auth-service (aka: auth, login service)
```
"""

log = logging.getLogger("dokoro.store")
_ITEM = re.compile(r"^\s*[-*+]\s+(.+?)\s*$")
_AKA = re.compile(r"\(\s*(?:aka|a\.k\.a\.?|also)\s*:\s*([^)]*)\)", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_DECORATION = str.maketrans("", "", "`*_")


def parse_dictionary(text: str) -> dict[str, str]:
    """Synonym → name (each name maps to itself), from the dictionary's text."""
    mapping: dict[str, str] = {}
    fenced = False
    for line in _COMMENT.sub("", text).splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        item = None if fenced else _ITEM.match(line)
        if not item:
            continue
        entry = item.group(1)
        aka = _AKA.search(entry)
        head = entry[: aka.start()] if aka else entry
        name_text = head.split(":", 1)[0].translate(_DECORATION)
        names = canonical_entities([name_text])
        if not names:
            continue
        name = names[0]
        mapping.setdefault(name, name)
        if aka:
            for synonym in canonical_entities([s.translate(_DECORATION) for s in re.split(r"[,;]", aka.group(1))]):
                mapping.setdefault(synonym, name)
    return mapping


@dataclass
class EntityDictionary:
    """The dictionary of one workspace folder (``<root>/memories/dictionary.md``)."""

    path: Path
    _mapping: dict[str, str] = field(default_factory=dict)
    _stat: tuple[int, int] | None = None
    _synonyms: re.Pattern[str] | None = None

    def refresh(self) -> bool:
        """Re-read the file when its stat changed; True when the mapping changed."""
        try:
            stat = self.path.lstat()
        except FileNotFoundError:
            changed = bool(self._mapping)
            self._mapping, self._stat = {}, None
            return changed
        key = (stat.st_mtime_ns, stat.st_size)
        if key == self._stat:
            return False
        try:
            # Behind the walls, as the memory files: no link followed, at most a megabyte.
            data = walls.read_within(self.path.parent.parent, f"{self.path.parent.name}/{self.path.name}")
        except (walls.UnsafeFile, OSError) as exc:
            log.warning("dokoro: %s not read: %s", self.path, exc)
            data = b""
        mapping = parse_dictionary(data.decode("utf-8", errors="replace"))
        changed = mapping != self._mapping
        self._mapping, self._stat = mapping, key
        if changed:
            synonyms = sorted((s for s, name in mapping.items() if s != name), key=lambda s: (-len(s), s))
            words = "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in synonyms)
            self._synonyms = re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.IGNORECASE) if synonyms else None
        return changed

    def write_starter(self) -> None:
        """Write the starter dictionary (one example entry) when the folder has none."""
        if not self.path.exists():
            atomic_write_text(self.path, STARTER, within=self.path.parent.parent)  # the store folder

    def name(self, entity: str) -> str:
        """The name of a (canonical) entity: itself unless it is a listed synonym."""
        return self._mapping.get(entity, entity)

    def synonyms_of(self, name: str) -> list[str]:
        """The other names listed for the entity ``name``."""
        return sorted(synonym for synonym, listed in self._mapping.items() if listed == name and synonym != name)

    def expand(self, query: str) -> str:
        """A query with the name of every synonym it uses added (``pg pool`` → ``pg pool postgres``),
        so a search finds the memories written under the name."""
        if self._synonyms is None:
            return query
        names: dict[str, None] = {}
        for found in self._synonyms.finditer(query):
            names.setdefault(self._mapping[" ".join(found.group(0).lower().split())], None)
        extra = [name for name in names if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", query, re.IGNORECASE)]
        return f"{query} {' '.join(extra)}" if extra else query

    def canonical(self, entities: Sequence[str] | None) -> list[str]:
        """Entities cleaned as the store cleans them, each under its name, de-duplicated in order."""
        seen: dict[str, None] = {}
        for entity in canonical_entities(entities):
            seen.setdefault(self.name(entity), None)
        return list(seen)
