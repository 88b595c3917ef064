"""The store's errors in a person's words: what to type at a shell, never a tool's argument syntax.

The store words its errors for the agents that call its tools (``purge=true with confirm=true``,
``find ids with dokoro_recall``). The commands reach the same services, so the few phrases that
name a tool or a tool argument are said again as the command a person types.
"""

from __future__ import annotations

import re

__all__ = ["for_people"]

_MEMORY_LIST = "list ids with `dokoro memory list`"

# (pattern, replacement): the tool phrases the memory, plan and tracking services use.
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"find ids with dokoro_recall or (?:dokoro_memory_status|`dokoro memory list`)", _MEMORY_LIST),
        (r"the ids are in dokoro_(?:recall|remember)'s answer", _MEMORY_LIST),
        (r"dokoro_memory_review lists (them|the stale ones)", r"`dokoro memory review` lists \1"),
        (
            r"to delete it for good use purge=true with confirm=true",
            "to delete it for good: `dokoro memory forget ID --purge --yes`",
        ),
        (r"call again with confirm=true", "run it again with --yes"),
        (r"deprecate it with dokoro_forget and a reason", 'run `dokoro memory forget ID --reason "…"`'),
        (r"\bretire=true\b", "--retire"),
        (r"\breview_after\b", "--review-after"),
        (r"\bvalid_until\b", "--valid-until"),
    )
)
_TOOL = re.compile(r"\bdokoro_[a-z_]+\b|\b[a-z_]+=(?:true|false)\b")


def for_people(message: str) -> str:
    """``message`` with its tool phrases said as shell commands."""
    if not _TOOL.search(message) and "review_after" not in message and "valid_until" not in message:
        return message
    for pattern, replacement in _PHRASES:
        message = pattern.sub(replacement, message)
    return message
