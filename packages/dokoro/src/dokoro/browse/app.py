"""The ``dokoro browse`` app: the screens, the store they read and what the session remembers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from dokoro.browse.actions import UndoRecord
from dokoro.browse.data import category_by_id, unknown_category
from dokoro.browse.screens import CategoriesScreen, HelpScreen, ItemsScreen

if TYPE_CHECKING:
    from dokoro_store import Store

__all__ = ["BrowseApp"]

log = logging.getLogger("dokoro.browse")


class BrowseApp(App[None]):
    """Categories → items → preview over one store.

    ``poll_seconds`` is how often the open screen checks for changes. Per-category filters and sort
    orders, and the last archive (for undo), last as long as the app.
    """

    CSS_PATH = "browse.tcss"
    TITLE = "dokoro browse"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "help"),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(
        self,
        store: Store,
        *,
        category: str | None = None,
        poll_seconds: float = 1.0,
        editor: Sequence[str] = ("vi",),
    ) -> None:
        """``editor``: the command line ``e`` runs on a memory's file (the file's path appended)."""
        super().__init__()
        self.store = store
        self.editor = tuple(editor)
        self.start_category = category
        self.poll_seconds = poll_seconds
        self.filters: dict[str, str] = {}
        self.orders: dict[str, str] = {}
        self.last_undo: UndoRecord | None = None
        self.messages: list[str] = []  # every toast, for the record (and tests)
        self._signal = store.change_signal()

    def on_mount(self) -> None:
        self.push_screen(CategoriesScreen())
        if self.start_category:
            category = category_by_id(self.start_category)
            if category is None:
                self.say(unknown_category(self.start_category))
            else:
                self.push_screen(ItemsScreen(category))

    def on_unmount(self) -> None:
        self._signal.close()

    def db_token(self) -> str:
        """The store's write counter; a failure reads as "changed" (the reload shows the error)."""
        try:
            return self._signal.token()
        except Exception as exc:  # the database went away: the next load says so on screen
            log.warning("dokoro browse: cannot poll the store: %s", exc)
            return f"error:{exc}"

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        """Hand a worker's result to the screen; dropped when the app has closed meanwhile."""
        if not self.is_running:
            return
        try:
            self.call_from_thread(callback, *args)
        except RuntimeError:  # the app stopped between the check and the call
            log.debug("dokoro browse: a result arrived after the app closed")

    def say(self, message: str) -> None:
        if not message:
            return
        self.messages.append(message)
        self.notify(message, timeout=2.5)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
