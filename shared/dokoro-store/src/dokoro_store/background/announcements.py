"""What the store has to tell the agent once, on the next tool answer (stdlib only).

A store converted from the original dokoro when it was opened says so on the first answer of
the process that converted it (:mod:`dokoro_store.moving.original.moving_in`); the server kit adds
each announcement to one tool result and then forgets it.
"""

from __future__ import annotations

import threading

__all__ = ["announce", "take_announcements"]

_PENDING: list[str] = []
_LOCK = threading.Lock()


def announce(text: str) -> None:
    """Queue ``text`` for the next tool answer of this process."""
    with _LOCK:
        _PENDING.append(text)


def take_announcements() -> list[str]:
    """The queued announcements, each handed out once."""
    with _LOCK:
        taken = list(_PENDING)
        _PENDING.clear()
    return taken
