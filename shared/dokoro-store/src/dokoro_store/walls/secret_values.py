"""What makes a value in a text a secret: the redaction marker and result, secret-like names,
known placeholders, entropy, and the checks each pattern of ``dokoro_store.walls.secrets`` runs on a
candidate (apart from it to keep each module under 500 lines)."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

MARKER = "[REDACTED:"


@dataclass(frozen=True)
class Redaction:
    """The cleaned text and the kinds of secret removed from it (one entry per occurrence)."""

    text: str
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)

    def notice(self) -> str:
        """A short sentence for a tool's answer, or '' when nothing was removed."""
        if not self.kinds:
            return ""
        counts: dict[str, int] = {}
        for kind in self.kinds:
            counts[kind] = counts.get(kind, 0) + 1
        parts = ", ".join(f"{n}× {kind}" if n > 1 else kind for kind, n in counts.items())
        noun = "secret" if len(self.kinds) == 1 else "secrets"
        return f"🔒 redacted {len(self.kinds)} {noun} before storing ({parts})"


# What a secret value may contain: no space, quote, backslash, separator or bracket.
_VALUE = r"[^\s\"'`\\,;()\[\]{}<>]"

# Words that make a name secret-like on their own, and words that make it so only with "key".
_STRONG = frozenset(
    {"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "credential", "credentials", "apikey"}
)
_KEY_QUALIFIERS = frozenset({"api", "access", "private", "secret", "signing", "encryption", "master", "client"})
# A name ending in one of these describes a secret without holding one (TOKEN_COUNT, password_file).
_NOT_A_SECRET_SUFFIX = frozenset(
    {
        "id",
        "ids",
        "count",
        "counts",
        "type",
        "types",
        "name",
        "names",
        "file",
        "path",
        "dir",
        "url",
        "uri",
        "endpoint",
        "size",
        "len",
        "length",
        "limit",
        "limits",
        "budget",
        "max",
        "min",
        "ttl",
        "expiry",
        "expires",
        "at",
        "env",
        "var",
        "field",
        "header",
        "hint",
        "prefix",
        "policy",
        "mode",
        "format",
        "kind",
        "hash",
        "usage",
        "used",
        "rate",
        "cost",
        "estimate",
        "index",
    }
)
_PLACEHOLDERS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "changeme",
        "password",
        "secret",
        "token",
        "example",
        "redacted",
        "undefined",
        "required",
        "optional",
        "string",
    }
)
_CAMEL = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]|[0-9]+")
_HEX_OR_UUID = re.compile(r"[0-9a-fA-F]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _is_marker(value: str) -> bool:
    """Already redacted (in any case: an entity's canonical name is lower-cased)."""
    return value[: len(MARKER)].upper() == MARKER


def _name_strength(name: str) -> int:
    """2 when ``name`` names a secret (DB_PASSWORD, apiToken), 1 for a bare key (SOME_KEY), else 0."""
    words = [w.lower() for w in _CAMEL.findall(name)]
    if not words or words[-1] in _NOT_A_SECRET_SUFFIX:
        return 0
    if any(word in _STRONG for word in words):
        return 2
    for before, word in itertools.pairwise(words):
        if word == "key" and before in _KEY_QUALIFIERS:
            return 2
    if "key" in words or "auth" in words:
        return 1
    return 0


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _high_entropy(value: str) -> bool:
    """Random-looking: long, upper- and lower-case letters and digits mixed, many distinct characters.

    Identifiers and slugs (``item:feature-20260610-2223``, ``my-cache-key-2024``) are one case;
    generated keys (base62, base64) mix both.
    """
    return (
        len(value) >= 16
        and any(c.isdigit() for c in value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and _entropy(value) >= 3.3
    )


def _placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        value.startswith(("$", "%", "*", "/", "./", "../", "~/"))
        or _is_marker(value)
        or lowered in _PLACEHOLDERS
        or len(set(lowered)) <= 2  # ******, xxxxxxxx
        or value.isdigit()
        or _DOTTED.fullmatch(value) is not None  # settings.api_key, os.environ
        or lowered.startswith(("your", "my-", "my_", "<"))
    )


def _assignment_value(match: re.Match[str]) -> bool:
    """Whether ``NAME = value`` assigns a secret (the callback of the assignment pattern)."""
    return _secret_field(match.group(1), match.group(3), quoted=bool(match.group(2)))


def _secret_field(name: str, value: str, *, quoted: bool) -> bool:
    """Whether ``value``, given to the field or variable ``name``, is a secret."""
    strength = _name_strength(name)
    if strength == 0 or _placeholder(value):
        return False
    if strength == 1:
        return _high_entropy(value)
    if len(value) < 6:
        return False
    # An unquoted bare word after a lower-case name is code (password = getpass), not a password.
    env_style = name.isupper()
    return quoted or env_style or not value.replace("_", "").isalpha()


def _bounded(match: re.Match[str]) -> bool:
    """A token starts where no identifier character precedes it, or right after a JSON escape.

    Checked here rather than by a look-behind in the pattern: a pattern that starts with a literal
    is searched for by the regex engine's fast prefix scan.
    """
    start, text = match.start(), match.string
    if start == 0:
        return True
    before = text[start - 1]
    if not (before.isalnum() or before == "_"):
        return True
    return start >= 2 and text[start - 2] == "\\" and before in "nrt"


def _prose_value(match: re.Match[str]) -> bool:
    """Whether "the token is <value>" names a random-looking value."""
    value = match.group(2)
    # Hex digests (git hashes, checksums) and UUIDs follow "key" and "token" in ordinary notes.
    return _high_entropy(value) and _HEX_OR_UUID.fullmatch(value) is None
