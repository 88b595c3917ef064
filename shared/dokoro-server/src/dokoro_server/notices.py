"""The sentence a tool adds to its answer when the store redacted secrets from what it wrote."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["secret_notice"]


def secret_notice(kinds: Sequence[str]) -> str:
    """The sentence a tool adds when secrets were redacted from what it stored ('' when none)."""
    if not kinds:
        return ""
    from dokoro_store import Redaction

    return Redaction("", tuple(kinds)).notice()
