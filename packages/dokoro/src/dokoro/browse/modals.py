"""The two modal screens of ``dokoro browse``: the help, and the y/n confirmation of a change."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Static

from dokoro.browse.widgets import (
    HELP,
)


class HelpScreen(ModalScreen[None]):
    """Every key, by level; any key closes it."""

    def compose(self) -> ComposeResult:
        yield Static(HELP, id="help")
        yield Static("press any key to close this help", id="help-hint", markup=False)

    def on_key(self, event: Key) -> None:
        event.stop()
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A y/n question at the bottom; every other key is swallowed."""

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        yield Static(self.prompt, id="confirm", markup=False)

    def on_key(self, event: Key) -> None:
        event.stop()
        event.prevent_default()
        if event.key in ("y", "Y"):
            self.dismiss(True)
        elif event.key in ("n", "N", "escape"):
            self.dismiss(False)
