"""Secret scanning: what an agent writes into memory is cleaned of credentials before it is stored.

Memory outlives the session and is shared with a team, exported to backups and shown in
briefings; an API key pasted into a log line must not travel with it. Every write path of the
store passes its text through :func:`redact`, which replaces each secret with
``[REDACTED:<kind>]`` and reports what it removed, so the tool's answer can say so.

The patterns favour precision (known token formats, private-key blocks, credentials in URLs,
``password=…`` assignments) over catching every random-looking string: a false positive would
silently corrupt the memory it is meant to protect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Redaction", "redact", "redact_all"]


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


# (kind, pattern, group to replace — 0 for the whole match)
_PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"
            r"[\s\S]*?-----END (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"
        ),
        0,
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"), 0),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0),
    ("dokoro-token", re.compile(r"\bdkr_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)"), 1),
    ("url-password", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s@/]{3,})@"), 1),
    (
        "aws-secret-key",
        re.compile(r"(?i)\baws_secret_access_key\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})"),
        1,
    ),
    (
        "password",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|passphrase|secret|client_secret|api[_-]?key|access[_-]?token"
            r"|auth[_-]?token|private[_-]?key)\b[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{6,})"
        ),
        1,
    ),
)


def redact(text: str) -> Redaction:
    """Replace every recognised secret in ``text`` with ``[REDACTED:<kind>]``."""
    if not text:
        return Redaction(text, ())
    kinds: list[str] = []
    for kind, pattern, group in _PATTERNS:

        def replace(match: re.Match[str], kind: str = kind, group: int = group) -> str:
            value = match.group(group)
            if value.startswith("[REDACTED:"):
                return match.group(0)
            kinds.append(kind)
            if group == 0:
                return f"[REDACTED:{kind}]"
            start, end = match.span(group)
            offset = match.start()
            whole = match.group(0)
            return whole[: start - offset] + f"[REDACTED:{kind}]" + whole[end - offset :]

        text = pattern.sub(replace, text)
    return Redaction(text, tuple(kinds))


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
