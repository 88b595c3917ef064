"""YAML front-matter of workspace markdown: split, load safely, parse leniently, render.

One writer (:func:`render`, PyYAML's safe dumper with the store's two layouts) for every
front-matter block the store writes, and one safe reader.
Front matter is written by people too (memory files, issue and task renderings, ``current.md``) and
so is hostile input. Every reader in the store loads it through :func:`load`: PyYAML's safe
loader, refusing anchors and aliases (``&a`` / ``*a``: an alias bomb of a few hundred bytes
expands to gigabytes once its values are walked), nesting deeper than :data:`MAX_DEPTH` and a
block longer than :data:`MAX_CHARS`. :func:`parse` is the lenient reader (an empty map when the
block cannot be loaded); :func:`load` raises :class:`FrontMatterError` with what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from functools import cache
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


@cache
def _loader_class() -> type:
    """PyYAML's safe loader, refusing anchors, aliases and deep nesting (built on first use; a
    class, the same for every store: process-wide by nature)."""
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

    return SafeFrontMatterLoader


# ----------------------------------------------------------------------------- writing
# A string YAML's safe loader reads back as the same string when written unquoted: a word of
# letters (of any script), digits and ``_ . / @ + -`` that starts with a letter or ``_`` and is none
# of YAML's boolean or null words. A UTC timestamp is written plain as a YAML timestamp: it reads
# back as the same moment (a datetime, which the reader of a plain block turns back into text).
_PLAIN_TEXT = re.compile(r"[A-Za-z_][\w./@+-]*")
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})
# Keys are caller data too (tags): anything but a plain identifier is quoted.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_STR = "tag:yaml.org,2002:str"
# One line per value, however long: a block is read back by people and diffed by line.
_WIDTH = 2**31 - 1


@cache
def _dumpers() -> dict[tuple[bool, bool], type]:
    """The dumpers of the two layouts (``plain``), on libyaml's emitter (``fast``) and on PyYAML's
    own: built on first use, classes the same for every store (process-wide by nature)."""
    import yaml

    def text(dumper: Any, value: object) -> Any:
        text = str(value)
        if dumper.plain:
            if _ISO_TIME.fullmatch(text):
                return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)
            if _PLAIN_TEXT.fullmatch(text) and text.lower() not in _YAML_WORDS:
                return dumper.represent_scalar(_STR, text)
        # Double-quoted: reads back as the same string whatever it holds (quotes, ``#``, line
        # breaks); what YAML cannot hold as it is, the emitter escapes.
        return dumper.represent_scalar(_STR, text, style='"')

    def mapping(dumper: Any, value: Mapping[Any, Any]) -> Any:
        pairs = []
        for key, item in value.items():
            if item is None and dumper.plain:
                continue
            name = str(key)
            style = None if _PLAIN_KEY.fullmatch(name) else '"'
            pairs.append((yaml.ScalarNode(_STR, name, style=style), dumper.represent_data(item)))
        return yaml.MappingNode("tag:yaml.org,2002:map", pairs, flow_style=False)

    def sequence(dumper: Any, value: Sequence[Any]) -> Any:
        return dumper.represent_sequence("tag:yaml.org,2002:seq", list(value), flow_style=dumper.plain or not value)

    made: dict[tuple[bool, bool], type] = {}
    for fast, base in ((True, getattr(yaml, "CSafeDumper", yaml.SafeDumper)), (False, yaml.SafeDumper)):
        for plain in (False, True):
            dumper: Any = type("FrontMatterDumper", (base,), {"plain": plain})
            for kind in (str, datetime, date):  # dates as the text they are given as, quoted
                dumper.add_representer(kind, text)
            dumper.add_multi_representer(object, text)  # anything else too (a path, an enum)
            dumper.add_representer(dict, mapping)
            dumper.add_multi_representer(Mapping, mapping)
            dumper.add_representer(list, sequence)
            dumper.add_representer(tuple, sequence)
            made[fast, plain] = dumper
    return made


def render(data: Mapping[str, Any], *, plain: bool = False) -> str:
    """Render a front-matter block with PyYAML (libyaml's emitter when installed), keys in the
    order given; nested maps become indented maps, lists YAML lists. Every string is
    double-quoted (it reads back as the same string, whatever it holds: quotes, ``#``, line
    breaks; what YAML cannot hold as it is, the emitter escapes).

    ``plain`` is the layout of a file people read more than programs (a memory file): a string
    is written unquoted where YAML reads it back as the same text (or, for a UTC timestamp, the
    same moment), a list on one line (``entities: [auth, "ui: login"]``), and a key whose value
    is None is left out. Every other string is quoted as above.
    """
    if not data:
        return "---\n---\n"
    import yaml  # lazy: only the writers of markdown pay for it

    options: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": _WIDTH}
    try:
        body = yaml.dump(dict(data), Dumper=_dumpers()[True, plain], **options)
    except UnicodeEncodeError:  # a lone surrogate: libyaml takes UTF-8 only, PyYAML's emitter escapes it
        body = yaml.dump(dict(data), Dumper=_dumpers()[False, plain], **options)
    return f"---\n{body}---\n"
