"""YAML front-matter of workspace markdown: split, load safely, parse leniently, render.

One writer (:func:`render`) for every front-matter block the store writes, and one safe reader.
Front matter is written by people too (memory files, issue and task renderings, ``current.md``) and
so is hostile input. Every reader in the store loads it through :func:`load`: PyYAML's safe
loader, refusing anchors and aliases (``&a`` / ``*a``: an alias bomb of a few hundred bytes
expands to gigabytes once its values are walked), nesting deeper than :data:`MAX_DEPTH` and a
block longer than :data:`MAX_CHARS`. :func:`parse` is the lenient reader (an empty map when the
block cannot be loaded); :func:`load` raises :class:`FrontMatterError` with what to fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_CHARS", "MAX_DEPTH", "FrontMatterError", "load", "opens", "parse", "render", "split"]

_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?", re.DOTALL)
_OPENER = re.compile(r"\A---[ \t]*\r?\n")
# A front-matter block is a few keys: anything longer is not one a person wrote by hand.
MAX_CHARS = 64 * 1024
MAX_DEPTH = 16


class FrontMatterError(ValueError):
    """Front matter that is not loaded; the message says what to fix."""


def opens(text: str) -> bool:
    """Whether ``text`` starts a front-matter block (a first line ``---``), closed or not."""
    return _OPENER.match(text) is not None


def split(text: str) -> tuple[str | None, str]:
    """Return ``(front_matter_text, body)``; front matter is None when absent."""
    match = _FRONT.match(text)
    if not match:
        return None, text
    return match.group(1), text[match.end() :]


def load(raw: str) -> Any:
    """The YAML of a front-matter block (without its ``---`` lines), loaded safely: no anchors or
    aliases, at most :data:`MAX_DEPTH` levels of nesting, at most :data:`MAX_CHARS` characters.
    Raises :class:`FrontMatterError` (the message says what to fix)."""
    if len(raw) > MAX_CHARS:
        raise FrontMatterError(
            f"the front matter is {len(raw):,} characters long (at most {MAX_CHARS:,}); keep a few keys in it"
        )
    import yaml  # lazy: only markdown readers pay for it

    try:
        loader = _loader_class()(raw)  # its reader refuses characters YAML cannot hold (U+007F, ...)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        if isinstance(exc, FrontMatterError):
            raise
        raise FrontMatterError(f"the front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    finally:
        loader.dispose()


def parse(text: str) -> tuple[dict[str, Any], str]:
    """Parse front matter into a dict (empty when absent or not loadable by :func:`load`) and the body."""
    raw, body = split(text)
    if raw is None:
        return {}, body
    try:
        data = load(raw)
    except FrontMatterError:
        return {}, body
    return (data if isinstance(data, dict) else {}), body


_LOADER: type | None = None


def _loader_class() -> type:
    """PyYAML's safe loader, refusing anchors, aliases and deep nesting (built on first use)."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    class Refused(FrontMatterError, yaml.YAMLError):
        pass

    class SafeFrontMatterLoader(yaml.SafeLoader):
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                line = event.start_mark.line + 1 if event.start_mark is not None else 0
                raise Refused(
                    f"the front matter uses a YAML anchor or alias (&name / *name, line {line}); "
                    "write each value out in full"
                )
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise Refused(f"the front matter nests deeper than {MAX_DEPTH} levels; keep it flat")
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    _LOADER = SafeFrontMatterLoader
    return _LOADER


def _scalar(value: Any, *, plain: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if plain and _reads_back_plain(text):
        return text
    # JSON strings are valid YAML scalars and escape everything that could break the block.
    return _quoted(text)


# A string YAML's safe loader reads back as the same string when written unquoted: a word of
# letters (of any script), digits and ``_ . / @ + -`` that starts with a letter or ``_`` and is none of YAML's
# boolean or null words. A UTC timestamp written plain reads back as the same moment (a datetime,
# which the reader of a plain block turns back into text).
_PLAIN_TEXT = re.compile(r"[A-Za-z_][\w./@+-]*")
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})


def _reads_back_plain(text: str) -> bool:
    return bool((_PLAIN_TEXT.fullmatch(text) and text.lower() not in _YAML_WORDS) or _ISO_TIME.fullmatch(text))


# What JSON leaves as it is but YAML cannot hold in a quoted scalar, written as a \u escape:
# DEL and the C1 controls (not printable in YAML, NEL a line break), the Unicode line and paragraph
# separators (line breaks in YAML 1.1), lone surrogates and the two non-characters U+FFFE/U+FFFF.
_NOT_YAML = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _quoted(text: str) -> str:
    return _NOT_YAML.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _key(key: str) -> str:
    # Keys are caller data too (tags): anything but a plain identifier is quoted, so a key like
    # "area: auth" cannot break the block.
    return key if _PLAIN_KEY.match(key) else _quoted(key)


def render(data: Mapping[str, Any], *, plain: bool = False) -> str:
    """Render a front-matter block, keys in the order given; nested maps become indented maps,
    lists YAML lists. Every string is JSON-quoted (it reads back as the same string, whatever it
    holds: quotes, ``#``, line breaks, characters YAML cannot hold are escaped).

    ``plain`` is the layout of a file people read more than programs (a memory file): a string
    is written unquoted where YAML reads it back as the same text (or, for a UTC timestamp, the
    same moment), a list on one line (``entities: [auth, "ui: login"]``), and a key whose value
    is None is left out. Every other string is quoted as above.
    """
    lines = ["---"]

    def emit(key: str, value: Any, indent: str) -> None:
        if value is None and plain:
            return
        if isinstance(value, Mapping):
            lines.append(f"{indent}{_key(key)}:")
            for sub_key, sub_value in value.items():
                emit(str(sub_key), sub_value, indent + "  ")
        elif isinstance(value, list | tuple):
            if not value:
                lines.append(f"{indent}{_key(key)}: []")
            elif plain:
                lines.append(f"{indent}{_key(key)}: [{', '.join(_scalar(item, plain=True) for item in value)}]")
            else:
                lines.append(f"{indent}{_key(key)}:")
                lines.extend(f"{indent}  - {_scalar(item)}" for item in value)
        else:
            lines.append(f"{indent}{_key(key)}: {_scalar(value, plain=plain)}")

    for key, value in data.items():
        emit(key, value, "")
    lines.append("---")
    return "\n".join(lines) + "\n"
