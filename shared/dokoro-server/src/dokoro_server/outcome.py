"""What one tool call's outcome was, as the capture middleware records it: the tool layer marks a
call whose arguments it refused (the caller's mistake: a schema violation, an unknown argument, a
value the store rejects as invalid), so the affective layer counts it as ``rejected``, apart from
the tool's own failures.

The middleware opens a :class:`CallOutcome` for each ``tools/call`` (:func:`watching`); the tool
marks it (:func:`mark_rejected`). The holder is shared by reference, so a mark made in a copied
context (a task or a worker thread) is still seen.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["CallOutcome", "mark_rejected", "rejected", "watching"]


@dataclass
class CallOutcome:
    rejected: bool = False  # the call's arguments were refused


_CURRENT: contextvars.ContextVar[CallOutcome | None] = contextvars.ContextVar("dokoro_call_outcome", default=None)


@contextlib.contextmanager
def watching() -> Iterator[CallOutcome]:
    """The outcome holder of the tool call about to run (the capture middleware's)."""
    outcome = CallOutcome()
    token = _CURRENT.set(outcome)
    try:
        yield outcome
    finally:
        _CURRENT.reset(token)


def mark_rejected() -> None:
    """The running call's arguments were refused (no-op outside a watched call)."""
    outcome = _CURRENT.get()
    if outcome is not None:
        outcome.rejected = True


def rejected() -> bool:
    """Whether the running call's arguments were refused (False outside a watched call)."""
    outcome = _CURRENT.get()
    return outcome is not None and outcome.rejected
