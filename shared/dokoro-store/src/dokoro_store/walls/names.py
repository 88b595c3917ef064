"""Validation of the names agents pass around: agent ids, tool names, keys."""

from __future__ import annotations

from dokoro_store.errors import InvalidArgumentError

__all__ = ["MAX_NAME", "optional_name", "required_name"]

MAX_NAME = 200


def required_name(value: str | None, what: str, max_length: int = MAX_NAME) -> str:
    """``value`` stripped; refuses an empty or overlong one with a message naming ``what``."""
    stripped = (value or "").strip()
    if not stripped:
        raise InvalidArgumentError(f"{what} must not be empty")
    if len(stripped) > max_length:
        raise InvalidArgumentError(f"{what} is {len(stripped)} characters; at most {max_length}")
    return stripped


def optional_name(value: str | None, what: str, max_length: int = MAX_NAME) -> str | None:
    """Like :func:`required_name`, but a missing or blank value is None."""
    if value is None or not value.strip():
        return None
    return required_name(value, what, max_length)
