"""Document ids for imported names: readable in any script, and distinct names never one document.

A name becomes a slug by transliteration (``東京`` → ``dongjing``, ``Москва`` → ``moskva``, with
:mod:`anyascii`) and lower-case ASCII words joined by ``-``. Two different names can give one slug
(``Café`` and ``Cafe``, ``John Smith`` and ``John_Smith``, two scripts that transliterate alike,
or names with nothing to transliterate): one keeps the plain slug, every other gets a short hash of
its own name after it (``cafe-3c5e9b0a``), so each name is its own document.

Which one keeps the plain slug is stable across runs: the name whose document already holds it (an
earlier import), else the first in the source's order (a knowledge graph appends new entities, a
notes folder is read in path order), so a rerun, or a grown file, names every document as before.
A plain id the store already uses for another name is never taken over.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

__all__ = ["HASH_DIGITS", "assign_ids", "hashed_id", "slug_of"]

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
HASH_DIGITS = 8
_EMPTY = "untitled"


def slug_of(text: str, limit: int = 80) -> str:
    """``text`` as lower-case ASCII words joined by ``-`` (any script transliterated), at most
    ``limit`` characters; ``untitled`` when nothing is left."""
    from anyascii import anyascii  # its tables load per script, on first use

    ascii_text = anyascii(text) if not text.isascii() else text
    return _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")[:limit].strip("-") or _EMPTY


def hashed_id(prefix: str, slug: str, key: str, digits: int = HASH_DIGITS) -> str:
    """``prefix`` + ``slug`` + a short hash of ``key``: the id of a name whose slug another has."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    return f"{prefix}{slug}-{digest}"


def assign_ids(
    prefix: str,
    keys: Sequence[tuple[str, str]],
    holders: Callable[[Sequence[str]], dict[str, str]],
) -> list[str]:
    """The document id of each ``(key, slug)`` (in order): ``prefix + slug`` for the key that holds
    it, a hashed id for the others (module docstring). ``holders(ids)``: of these plain ids, the
    ones the store already has, each with the key of the name its document is about."""
    plain = [f"{prefix}{slug}" for _key, slug in keys]
    there = holders(sorted(set(plain)))
    owner: dict[str, str] = {}  # plain id -> the key that keeps it
    for (key, _slug), doc_id in zip(keys, plain, strict=True):
        held = there.get(doc_id)
        if held is not None:
            owner.setdefault(doc_id, held)  # an earlier import's: it keeps its document
        else:
            owner.setdefault(doc_id, key)  # the first in the source's order
    ids: list[str] = []
    taken = set(plain)
    for (key, slug), doc_id in zip(keys, plain, strict=True):
        if owner[doc_id] == key:
            ids.append(doc_id)
            continue
        digits = HASH_DIGITS
        candidate = hashed_id(prefix, slug, key, digits)
        while candidate in taken:  # a hashed id that is another name's plain slug: a longer hash
            digits += 4
            candidate = hashed_id(prefix, slug, key, digits)
        taken.add(candidate)
        ids.append(candidate)
    return ids
