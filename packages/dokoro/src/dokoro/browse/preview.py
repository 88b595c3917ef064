"""The preview screen of ``dokoro browse``: one item in full, kept fresh while it is open."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from dokoro.browse.data import (
    Category,
    Item,
    load_items,
    preview_text,
)
from dokoro.browse.live import MAX_AGE_SECONDS, Freshness, folder_signature
from dokoro.browse.render import changed_lines, markdown_lines, plain_lines
from dokoro.browse.widgets import (
    PULSE_SECONDS,
    Crumbs,
    PreviewScroll,
    _app,
)


class PreviewScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back"),
        Binding("backspace", "back", "back", show=False),
    ]

    def __init__(self, category: Category, item: Item) -> None:
        super().__init__()
        self.category = category
        self.item = item
        self.lines: list[Text] = []
        self.pulse: set[int] = set()
        self.loaded = threading.Event()
        self._fresh = Freshness(None if item.path is not None else MAX_AGE_SECONDS)
        self._pulse_timer: Any = None

    def compose(self) -> ComposeResult:
        yield Crumbs(self.category.label, self.item.label)
        with PreviewScroll(id="preview"):
            yield Static(id="body", markup=False)
        yield Static(self.item.sublabel, id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#preview", PreviewScroll).focus()
        self.set_interval(_app(self).poll_seconds, self.poll)
        self.poll()

    def action_back(self, _keep_filter: bool = False) -> None:
        self.app.pop_screen()

    @work(thread=True, exclusive=True, group="preview")
    def poll(self) -> None:
        app = _app(self)
        if not self.is_current and self.loaded.is_set():
            return  # covered by the help
        if self.item.path is not None:
            state: object = folder_signature([self.item.path.parent])
        else:
            state = app.db_token()
        if not self._fresh.changed(state):
            return
        item = self.item
        if item.detail is not None and item.kind not in ("search",):
            # A row card: rebuild it from a fresh list (the row may have changed).
            fresh = next((i for i in load_items(app.store, self.category) if i.id == item.id), None)
            item = fresh or item
        text = preview_text(app.store, item)
        app.deliver(self.show, text)

    def show(self, text: str) -> None:
        markdown = self.item.path is None or self.item.path.suffix == ".md"
        lines = markdown_lines(text) if markdown else plain_lines(text)
        first = not self.loaded.is_set()
        self.loaded.set()
        changed = set() if first else changed_lines(self.lines, lines)
        if not first and not changed and len(lines) == len(self.lines):
            return
        self.lines = lines
        self.pulse = changed
        self._draw()
        if changed:
            if self._pulse_timer is not None:
                self._pulse_timer.stop()
            self._pulse_timer = self.set_timer(PULSE_SECONDS, self._unpulse)

    def _unpulse(self) -> None:
        self.pulse = set()
        self._draw()

    def _draw(self) -> None:
        body = Text()
        for index, line in enumerate(self.lines):
            if index:
                body.append("\n")
            if index in self.pulse:
                line = line.copy()
                line.stylize("bold reverse yellow")
            body.append_text(line)
        self.query_one("#body", Static).update(body)
