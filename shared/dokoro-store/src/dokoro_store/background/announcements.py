"""What a store has to tell the agent once, on the next tool answer (stdlib only).

A store converted from the original dokoro when it was opened says so on the first answer of
the process that converted it (:meth:`dokoro_store.store.Store.open`); the server kit adds what
``store.announcements`` holds to one tool result, and the store forgets it. Each store has its
own: a process with two stores never tells one's news on the other's answers.
"""

from __future__ import annotations

import threading

__all__ = ["Announcements"]


class Announcements:
    """The notices one store's next tool answer carries, each handed out once."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        """Queue ``text`` for the next tool answer."""
        with self._lock:
            self._pending.append(text)

    def take(self) -> list[str]:
        """The queued announcements, each handed out once."""
        with self._lock:
            taken, self._pending = self._pending, []
        return taken
