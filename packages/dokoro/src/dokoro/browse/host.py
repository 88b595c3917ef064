"""What the screens of ``dokoro browse`` need from the app that hosts them (``BrowseApp`` has it).

A Protocol, so the screens do not import the app module that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dokoro_store import Store

    from dokoro.browse.actions import UndoRecord

__all__ = ["BrowseHost"]


class BrowseHost(Protocol):
    store: Store
    editor: tuple[str, ...]
    poll_seconds: float
    filters: dict[str, str]
    orders: dict[str, str]
    last_undo: UndoRecord | None

    def db_token(self) -> str:
        """The store's write counter."""
        ...

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        """Hand a worker's result to the screen."""
        ...

    def say(self, message: str) -> None: ...

    def suspend(self) -> AbstractContextManager[None]:
        """Hand the terminal to a child process (Textual's ``App.suspend``)."""
        ...
