"""Secret scanning: what an agent writes into memory is cleaned of credentials before it is stored.

Memory outlives the session and is shared with a team, exported to backups and shown in
briefings; an API key pasted into a log line must not travel with it. The store redacts at its
lowest layers, so no write path can forget it: every string a statement writes to the database
(:mod:`dokoro_store.db.redaction`, an engine hook) and every text file the store writes
(:func:`dokoro_store.walls.files.atomic_write_text`) passes through :func:`redact`, which replaces each
secret with ``[REDACTED:<kind>]``. Services also redact explicitly before writing, to tell the
agent what they removed.

The patterns favour precision (known token formats, private-key blocks, credentials in URLs,
assignments to secret-like names) over catching every random-looking string: a false positive
would silently corrupt the memory it is meant to protect. Ordinary prose, git hashes, UUIDs and
file paths are left alone.

Every pattern runs in time linear in the text: no nested or adjacent unbounded quantifiers, a
bounded look at each candidate, and a boundary before each start so a long word is not retried at
every position. No pattern consumes a quote or a backslash, so redacting serialised JSON keeps it
valid, and a JSON escape (``\\n``) before a secret counts as a boundary.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from dokoro_store.walls.secret_values import (
    _VALUE,
    MARKER,
    Redaction,
    _assignment_value,
    _bounded,
    _is_marker,
    _prose_value,
    _secret_field,
)

__all__ = ["MARKER", "Redaction", "collect_redactions", "contains_secret", "redact", "redact_all", "redact_value"]


_PRIVATE = re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_END = re.compile(r"-----END (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----")
# The body of a key block cut short (no END line): its base64 lines up to the first blank or
# other line (a newline may be JSON-escaped).
_PRIVATE_BODY = re.compile(r"(?:[ \t\r]*(?:\n|\\n)[A-Za-z0-9+/=]+)*")


def _private_keys(text: str, kinds: list[str]) -> str:
    """``text`` with each private-key block (BEGIN to its END, or to the end of its body) replaced.

    Done by position rather than by one regex, so a text full of BEGIN lines without END stays
    linear: the END lines are found once, and each block takes the first END after its BEGIN.
    """
    begins = list(_PRIVATE.finditer(text))
    if not begins:
        return text
    ends = [m.end() for m in _PRIVATE_END.finditer(text)]
    parts: list[str] = []
    cursor = 0
    end_index = 0
    for begin in begins:
        if begin.start() < cursor:
            continue  # inside the block just replaced
        while end_index < len(ends) and ends[end_index] <= begin.end():
            end_index += 1
        if end_index < len(ends):
            stop = ends[end_index]
        else:
            body = _PRIVATE_BODY.match(text, begin.end())
            stop = body.end() if body else begin.end()
        parts.append(text[cursor : begin.start()])
        parts.append(f"{MARKER}private-key]")
        kinds.append("private-key")
        cursor = stop
    parts.append(text[cursor:])
    return "".join(parts)


# The name-based patterns only run on a text that holds one of these words somewhere.
_NAME_WORDS = re.compile(r"(?i)pass|pwd|secret|token|key|credential|auth")
_NAME_KINDS = frozenset({"password", "secret"})

# (kind, pattern, group to replace — 0 for the whole match, a check of the match or None)
_Check = Callable[[re.Match[str]], bool] | None
_PATTERNS: tuple[tuple[str, re.Pattern[str], int, _Check], ...] = (
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"), 0, _bounded),
    ("openai-key", re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0, _bounded),
    (
        "github-token",
        re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        0,
        _bounded,
    ),
    ("gitlab-token", re.compile(r"glpat-[A-Za-z0-9_-]{20,}"), 0, _bounded),
    ("slack-token", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), 0, _bounded),
    (
        "slack-webhook",
        re.compile(r"hooks\.slack\.com/services/(T[A-Za-z0-9]{6,}/B[A-Za-z0-9]{6,}/[A-Za-z0-9]{16,})"),
        1,
        None,
    ),
    ("stripe-key", re.compile(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0, _bounded),
    ("aws-access-key", re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"), 0, _bounded),
    ("google-api-key", re.compile(r"AIza[0-9A-Za-z_-]{35}"), 0, _bounded),
    ("dokoro-token", re.compile(r"dkr_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}"), 0, _bounded),
    ("jwt", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, _bounded),
    ("bearer-token", re.compile(r"(?i)\bbearer[ \t]{1,8}([A-Za-z0-9._~+/-]{16,}=*)"), 1, None),
    (
        "basic-auth",
        re.compile(r"(?i)\bauthorization[\"']?[ \t]{0,8}:[ \t]{0,8}basic[ \t]{1,8}([A-Za-z0-9+/]{8,}={0,2})"),
        1,
        None,
    ),
    (
        "url-password",
        re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/@\"'\\]{0,256}:([^\s@/\"'\\]{1,256})@"),
        1,
        lambda match: set(match.group(1)) != {"*"},  # ``***``: a URL shown with its password hidden
    ),
    (
        "password",
        # NAME = value, NAME: value, export NAME="value", "name": "value", and the same with the
        # quote escaped (a YAML or JSON string: NAME=\"value\"). The name decides; see
        # _assignment_value. Bounded name and spacing keep the scan linear.
        re.compile(
            r"\b(?:export[ \t]{1,8})?([A-Za-z_][A-Za-z0-9_]{0,63})(?:\\?[\"'])?[ \t]{0,8}(?::=|=>|[:=])[ \t]{0,8}"
            r"((?:\\?[\"'`])?)(" + _VALUE + r"{1,512})"
        ),
        3,
        _assignment_value,
    ),
    (
        "secret",
        # Prose: "the API token is 4f9c…", "password ab12…": only a random-looking value.
        re.compile(
            r"(?i)\b(password|passphrase|secret|token|api[ _-]?key|access[ _-]?key|key)"
            r"(?:[ \t]{1,4}(?:is|was|was set to|is set to))?[ \t]{1,4}[\"'`]?([A-Za-z0-9+/_=.-]{16,512})"
        ),
        2,
        _prose_value,
    ),
)


_COLLECTOR: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("dokoro_redactions", default=None)


@contextlib.contextmanager
def collect_redactions() -> Iterator[list[str]]:
    """Within the block, every :func:`redact` that removes something appends its kinds to the list.

    The server kit wraps each tool call in one, so the answer can say what the store's last line
    of defence removed even when a service did not report it.
    """
    found: list[str] = []
    token = _COLLECTOR.set(found)
    try:
        yield found
    finally:
        _COLLECTOR.reset(token)


def _substitute(text: str, kind: str, pattern: re.Pattern[str], group: int, check: _Check, kinds: list[str]) -> str:
    """``text`` with each accepted match's ``group`` replaced by the marker of ``kind``.

    A rejected match resumes the search just past its first group (the name of an assignment, the
    first character of a token), so a rejected ``config: password`` still lets ``password = …``
    that follows be found.
    """
    parts: list[str] = []
    cursor = 0
    pos = 0
    while True:
        match = pattern.search(text, pos)
        if match is None:
            break
        value = match.group(group)
        if _is_marker(value):
            pos = match.end()
            continue
        if check is not None and not check(match):
            pos = match.end(1) if pattern.groups else match.start() + 1
            continue
        start, end = match.span(group)
        parts.append(text[cursor:start])
        parts.append(f"{MARKER}{kind}]")
        kinds.append(kind)
        cursor = pos = end
    if not parts:
        return text
    parts.append(text[cursor:])
    return "".join(parts)


class _CleanTexts:
    """Texts known to hold no secret (a service's redacted output, about to be written).

    One write redacts the same text up to three times (the service, the ORM flush, the statement
    hook), and the short values every write carries (ids, states, embedder names, timestamps)
    come back on every call: a hash lookup instead of a second scan makes redaction once per text
    (a remember ran 133 scans, 7% of its CPU, before short texts were kept too). Bounded by total
    size and by count, least recently used first out.
    """

    BUDGET = 8_000_000  # characters held at most
    ENTRIES = 65_536  # texts held at most

    def __init__(self) -> None:
        self._texts: OrderedDict[str, None] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def __contains__(self, text: str) -> bool:
        with self._lock:
            if text in self._texts:
                self._texts.move_to_end(text)
                return True
            return False

    def add(self, text: str) -> None:
        if len(text) > self.BUDGET:
            return
        with self._lock:
            if text in self._texts:
                return
            self._texts[text] = None
            self._size += len(text)
            while self._size > self.BUDGET or len(self._texts) > self.ENTRIES:
                old, _ = self._texts.popitem(last=False)
                self._size -= len(old)


# Process-wide on purpose, unlike a store's state: whether a text holds a secret depends on the text
# alone (the patterns above are the same for every store), so a text one store's write found clean is
# clean for any other; the cache answers only that, and is bounded.
_CLEAN = _CleanTexts()


def redact(text: str) -> Redaction:
    """Replace every recognised secret in ``text`` with ``[REDACTED:<kind>]``."""
    if not text or text in _CLEAN:
        return Redaction(text, ())
    kinds: list[str] = []
    text = _private_keys(text, kinds)
    named = _NAME_WORDS.search(text) is not None
    for kind, pattern, group, check in _PATTERNS:
        if kind in _NAME_KINDS and not named:
            continue
        text = _substitute(text, kind, pattern, group, check, kinds)
    _report(kinds)
    _CLEAN.add(text)
    return Redaction(text, tuple(kinds))


def _report(kinds: Sequence[str]) -> None:
    if kinds:
        collector = _COLLECTOR.get()
        if collector is not None:
            collector.extend(kinds)


def contains_secret(text: str) -> tuple[str, ...]:
    """The kinds of secret ``text`` holds (empty when none), without reporting to a collector."""
    token = _COLLECTOR.set(None)
    try:
        return redact(text).kinds
    finally:
        _COLLECTOR.reset(token)


def redact_all(texts: Iterable[str | None]) -> tuple[list[str | None], tuple[str, ...]]:
    """Redact several fields at once; returns the cleaned values and every kind removed."""
    cleaned: list[str | None] = []
    kinds: list[str] = []
    for value in texts:
        if value is None:
            cleaned.append(None)
            continue
        result = redact(value)
        cleaned.append(result.text)
        kinds.extend(result.kinds)
    return cleaned, tuple(kinds)


def redact_value(value: Any) -> tuple[Any, tuple[str, ...]]:
    """``value`` (a string, or JSON-like dicts and lists of them) with every string redacted.

    Dictionary keys are redacted too; the structure and every other value are kept. Returns the
    same object when nothing changed.
    """
    kinds: list[str] = []

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            result = redact(item)
            if not result.kinds:
                return item
            kinds.extend(result.kinds)
            return result.text
        if isinstance(item, dict):
            pairs = [(walk(k), field(k, v)) for k, v in item.items()]
            if all(a is k and b is v for (a, b), (k, v) in zip(pairs, item.items(), strict=True)):
                return item
            return dict(pairs)
        if isinstance(item, list | tuple):
            items = [walk(x) for x in item]
            if all(a is b for a, b in zip(items, item, strict=True)):
                return item
            return type(item)(items) if isinstance(item, tuple) else items
        return item

    def field(key: Any, item: Any) -> Any:
        # {"password": "hunter2!"}: the key says what the value is, as NAME=value does in text.
        if isinstance(key, str) and isinstance(item, str) and not _is_marker(item):
            candidate = item.strip()
            if candidate and not any(c.isspace() for c in candidate) and _secret_field(key, candidate, quoted=True):
                kinds.append("password")
                _report(("password",))
                return f"{MARKER}password]"
        return walk(item)

    cleaned = walk(value)
    return cleaned, tuple(kinds)
