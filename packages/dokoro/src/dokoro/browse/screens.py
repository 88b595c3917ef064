"""The screens of ``dokoro browse``: categories → items → preview, plus help and the y/n confirm.

Slow work (reading the store, searching, carrying out an action) runs in thread workers; results
come back to the screen with ``call_from_thread``. Nothing waits on a wall clock: a search takes
what it takes (the first one loads the embedder), says so while it runs, and never blocks the next.
Each list screen polls on a timer and reloads only when its folders' signature or the store's
write signal moved.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from dokoro.browse import actions
from dokoro.browse.data import (
    CATEGORIES,
    Category,
    CategorySummary,
    Item,
    load_items,
    search_items,
    sort_items,
    summaries,
)
from dokoro.browse.fuzzy import fuzzy_filter
from dokoro.browse.live import MAX_AGE_SECONDS, Freshness, folder_signature
from dokoro.browse.modals import ConfirmScreen, HelpScreen
from dokoro.browse.preview import PreviewScreen
from dokoro.browse.widgets import (
    ORDER_NAMES,
    ORDERS,
    Crumbs,
    NavList,
    _app,
)

__all__ = ["CategoriesScreen", "ConfirmScreen", "HelpScreen", "ItemsScreen", "PreviewScreen"]

log = logging.getLogger("dokoro.browse")


class CategoriesScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "open"),
        Binding("escape", "back", "quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.summaries: list[CategorySummary] = []
        self._fresh = Freshness(MAX_AGE_SECONDS)

    def compose(self) -> ComposeResult:
        yield Crumbs()
        yield NavList(id="list")
        yield Static(id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.set_interval(_app(self).poll_seconds, self.poll)
        self.poll()

    @work(thread=True, exclusive=True, group="categories")
    def poll(self) -> None:
        app = _app(self)
        if not self.is_current and self.summaries:
            return  # covered by another screen: it checks again when shown
        folders = [d for c in CATEGORIES if c.dirs is not None for d in c.dirs(app.store.paths.root)]
        if self._fresh.changed((folder_signature(folders), app.db_token())):
            found = summaries(app.store)
            app.deliver(self.show, found)

    def show(self, found: list[CategorySummary]) -> None:
        if found == self.summaries:
            return
        self.summaries = found
        options = self.query_one(OptionList)
        keep = options.highlighted or 0
        width = max(len(s.label) for s in found)
        prompts = []
        for summary in found:
            prompt = Text(f"{summary.label:<{width}}  ")
            prompt.append(f"{summary.count:>4}", style="bold" if summary.count else "dim")
            prompt.append(f"   {summary.hint}", style="dim")
            prompts.append(Option(prompt))
        options.set_options(prompts)
        options.highlighted = min(keep, len(found) - 1)
        self._status()

    @on(OptionList.OptionHighlighted)
    def _status(self) -> None:
        options = self.query_one(OptionList)
        position = 0 if options.highlighted is None else options.highlighted + 1
        self.query_one("#status", Static).update(f"{position}/{len(self.summaries)}")

    def action_back(self, arrow: bool = False) -> None:
        if not arrow:  # esc quits; ← has nowhere to go
            self.app.exit()

    @on(OptionList.OptionSelected)
    def action_open(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is not None and index < len(CATEGORIES):
            self.app.push_screen(ItemsScreen(CATEGORIES[index]))


class ItemsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "open"),
        Binding("escape", "back", "back"),
        Binding("backspace", "back(True)", "back", show=False),
        Binding("slash", "filter", "filter"),
        Binding("o", "sort", "sort"),
        Binding("s", "search", "search"),
        Binding("a", "act('a')", "archive", show=False),
        Binding("w", "act('w')", "week", show=False),
        Binding("u", "act('u')", "undo", show=False),
        Binding("r", "act('r')", "release", show=False),
        Binding("p", "act('p')", "advance", show=False),
        Binding("f", "act('f')", "forget", show=False),
        Binding("v", "act('v')", "approve", show=False),
        Binding("x", "act('x')", "reject", show=False),
        Binding("n", "act('n')", "renew", show=False),
        Binding("e", "edit", "edit", show=False),
        Binding("up", "cursor(-1)", show=False),
        Binding("down", "cursor(1)", show=False),
    ]
    # The action keys a category offers, named in its status line (any key answers anywhere).
    ACTIONS: ClassVar[dict[str, str]] = {
        "daily": "a archive · w week · u undo",
        "plans": "a archive · p advance · u undo",
        "archive": "u undo",
        "claims": "r release",
        "memories": "e edit · f forget · v approve · x reject · n renew",
        "stale": "n renew · f retire · e edit",
        "proposals": "v approve · x reject",
    }

    def __init__(self, category: Category) -> None:
        super().__init__()
        self.category = category
        self.items: list[Item] = []
        self.snapshot: list[Item] | None = None  # the list behind search results
        self.snapshot_results: list[Item] = []
        self.shown: list[Item] = []
        self.typing: str | None = None  # "filter" | "search" while an input has the keys
        self.searching: str | None = None  # the query of the search running now
        self.next_query: str | None = None  # typed while one runs: it runs next
        self.search_dropped = False  # esc while searching: the answer is not shown
        self.search_started = 0.0
        self._ticking: Timer | None = None
        self.loaded = threading.Event()
        self._fresh = Freshness(None if category.dirs else MAX_AGE_SECONDS)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Crumbs(self.category.label)
        yield NavList(id="items")
        yield Input(id="filter", placeholder="filter…")
        yield Input(id="query", placeholder="semantic search: type a question, enter runs, esc cancels")
        yield Static(id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        for box in self.query(Input):
            box.display = False
            box.cursor_blink = False  # steady: easier to read, and screenshots do not flicker
        self.query_one(OptionList).focus()
        self.set_interval(_app(self).poll_seconds, self.poll)
        self.poll()

    @property
    def filter(self) -> str:
        return _app(self).filters.get(self.category.id, "")

    @property
    def order(self) -> str:
        return _app(self).orders.get(self.category.id, "default")

    # ------------------------------------------------------------------ loading
    @work(thread=True, exclusive=True, group="items")
    def poll(self) -> None:
        app = _app(self)
        if self.snapshot is not None or (not self.is_current and self.loaded.is_set()):
            return  # search results on screen (a reload would replace them), or covered by a preview
        folders = self.category.dirs(app.store.paths.root) if self.category.dirs else []
        if self._fresh.changed((folder_signature(folders), app.db_token())):
            found = load_items(app.store, self.category)
            app.deliver(self.apply_items, found)

    def apply_items(self, found: list[Item]) -> None:
        self.loaded.set()
        if found == self.items and self.shown:
            return
        self.items = found
        self.render_list()

    def selected(self) -> Item | None:
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.shown):
            return None
        return self.shown[index]

    def render_list(self, keep: str | None = None) -> None:
        current = self.selected()
        keep = keep if keep is not None else (current.id if current else None)
        source = self.snapshot_results if self.snapshot is not None else self.items
        ordered = source if self.snapshot is not None else sort_items(source, self.order)
        self.shown = fuzzy_filter(ordered, self.filter, lambda i: f"{i.label} {i.flag} {i.sublabel}")
        options = self.query_one(OptionList)
        options.set_options(Option(self._prompt(item)) for item in self.shown)
        if self.shown:
            ids = [item.id for item in self.shown]
            options.highlighted = ids.index(keep) if keep in ids else 0
        self._status()

    @staticmethod
    def _prompt(item: Item) -> Text:
        text = Text(item.label, style="dim" if item.dim or item.archived else "bold")
        if item.flag:
            text.append("  ")
            text.append(item.flag, style="bold yellow")
        if item.sublabel:
            text.append("  ")
            text.append(item.sublabel, style="dim")
        return text

    @on(OptionList.OptionHighlighted)
    def _status(self) -> None:
        options = self.query_one(OptionList)
        position = 0 if options.highlighted is None else options.highlighted + 1
        parts = [f"{position}/{len(self.shown)}"]
        if self.searching is not None and not self.search_dropped:
            seconds = int(time.monotonic() - self.search_started)
            parts.append(f"searching for {self.searching!r}… {seconds} s · esc drops it")
        elif self.snapshot is not None:
            parts.append("search results · esc restores the list")
        else:
            parts.append(ORDER_NAMES[self.order])
        if self.filter:
            parts.append(f"filter: {self.filter}")
        if not self.items and self.snapshot is None and self.loaded.is_set():
            parts.append("nothing here yet")
        if self.category.id in self.ACTIONS:
            parts.append(self.ACTIONS[self.category.id])
        self.query_one("#status", Static).update(" · ".join(parts))

    # ------------------------------------------------------------------ navigation
    def action_cursor(self, step: int) -> None:
        options = self.query_one(OptionList)
        if step < 0:
            options.action_cursor_up()
        else:
            options.action_cursor_down()

    @on(OptionList.OptionSelected)
    def action_open(self) -> None:
        item = self.selected()
        if item is not None:
            self.app.push_screen(PreviewScreen(self.category, item))

    def action_back(self, keep_filter: bool = False) -> None:
        """Esc: cancel typing, then leave search results, then clear the filter, then go back.
        ⌫/← (``keep_filter``) go back keeping the filter (after leaving search results)."""
        if self.typing is not None:
            self._stop_typing(clear=True)
            return
        if self.searching is not None and not self.search_dropped:
            self.search_dropped = True
            self.next_query = None
            self.query_one(OptionList).loading = False
            _app(self).say(f"search for {self.searching!r} dropped")
            self._status()
            return
        if self.snapshot is not None:
            self.snapshot = None
            self.snapshot_results = []
            self.render_list()
            return
        if self.filter and not keep_filter:
            _app(self).filters[self.category.id] = ""
            self.render_list()
            return
        self.app.pop_screen()

    def action_sort(self) -> None:
        if self.snapshot is not None:
            return  # results keep their relevance order
        _app(self).orders[self.category.id] = ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)]
        self.render_list()
        self.query_one(OptionList).highlighted = 0 if self.shown else None

    # ------------------------------------------------------------------ typing: filter and search
    def action_filter(self) -> None:
        self._start_typing("filter", self.filter)

    def action_search(self) -> None:
        self._start_typing("search", "")

    def _start_typing(self, mode: str, value: str) -> None:
        self.typing = mode
        box = self.query_one("#filter" if mode == "filter" else "#query", Input)
        box.value = value
        box.display = True
        box.focus()

    def _stop_typing(self, *, clear: bool) -> None:
        mode, self.typing = self.typing, None
        box = self.query_one("#filter" if mode == "filter" else "#query", Input)
        box.display = False
        if clear and mode == "filter":
            _app(self).filters[self.category.id] = ""
            self.render_list()
        self.query_one(OptionList).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        _app(self).filters[self.category.id] = event.value
        self.render_list(keep="")

    @on(Input.Submitted, "#filter")
    def _filter_kept(self) -> None:
        self._stop_typing(clear=False)

    @on(Input.Submitted, "#query")
    def _search(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        self._stop_typing(clear=False)
        if not query:
            return
        if self.searching is not None:
            # One search at a time (a thread cannot be stopped): the newest query waits for it.
            self.next_query = query
            self.search_dropped = False
            _app(self).say(f"still searching for {self.searching!r}; {query!r} runs when it ends")
            self._status()
            return
        self.start_search(query)

    def start_search(self, query: str) -> None:
        """Run a semantic search however long it takes: the list shows it is busy and the status
        line counts the seconds; esc drops the answer, a newer query replaces it."""
        self.searching = query
        self.search_dropped = False
        self.search_started = time.monotonic()
        self.query_one(OptionList).loading = True
        if self._ticking is None:
            self._ticking = self.set_interval(1.0, self._status)
        self._status()
        self.run_search(query)

    @work(thread=True, group="search")
    def run_search(self, query: str) -> None:
        app = _app(self)
        try:
            found: list[Item] | None = search_items(app.store, query)
            error: Exception | None = None
        except Exception as exc:  # reported on screen and logged; the next search runs as usual
            log.warning("dokoro browse: a search failed", exc_info=True)
            found, error = None, exc
        app.deliver(self.show_results, query, found, error)

    def _search_over(self) -> None:
        self.searching = None
        self.query_one(OptionList).loading = False
        if self._ticking is not None:
            self._ticking.stop()
            self._ticking = None

    def show_results(self, query: str, found: list[Item] | None, error: BaseException | None) -> None:
        app = _app(self)
        dropped = self.search_dropped
        self._search_over()
        waiting, self.next_query = self.next_query, None
        if waiting is not None:
            self.start_search(waiting)  # a newer query was typed meanwhile: its answer is the one shown
            return
        if dropped:
            self._status()
            return
        if error is not None or found is None:
            app.say(f"search failed: {error}")
            self._status()
            return
        if self.snapshot is None:
            self.snapshot = self.items
        self.snapshot_results = found
        self.render_list(keep="")
        app.say(f"{len(found)} result(s) for {query!r}")

    # ------------------------------------------------------------------ actions
    def action_act(self, key: str) -> None:
        app = _app(self)
        armed = actions.arm(app.store, key, self.selected(), app.last_undo)
        if isinstance(armed, str):
            app.say(armed)
            return
        self.ask(armed)

    def action_edit(self) -> None:
        """Open the selected memory's markdown file in the editor, then reconcile what was saved."""
        import subprocess

        from textual.app import SuspendNotSupported

        app = _app(self)
        item = self.selected()
        if item is None or item.kind != "memory" or not item.ref:
            app.say("e edits memories only")
            return
        file = actions.memory_file(app.store, item.ref)
        if isinstance(file, str):
            app.say(file)
            return
        command = [*app.editor, str(file)]
        try:
            try:
                with app.suspend():
                    code = subprocess.run(command, check=False).returncode
            except SuspendNotSupported:  # no terminal to hand over (a headless run): edit without it
                code = subprocess.run(command, check=False, stdin=subprocess.DEVNULL, capture_output=True).returncode
        except FileNotFoundError:
            app.say(f"editor {command[0]!r} not found; set $EDITOR")
            return
        if code != 0:
            app.say(f"the editor exited with {code}; a saved change is picked up on the next refresh")
        self.carry_out(actions.Confirm("edited", "", item=item))

    def ask(self, confirm: actions.Confirm) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.carry_out(confirm)
            else:
                _app(self).say("cancelled")

        self.app.push_screen(ConfirmScreen(confirm.prompt), answered)

    @work(thread=True, group="actions")
    def carry_out(self, confirm: actions.Confirm) -> None:
        app = _app(self)
        outcome = actions.run(app.store, confirm)
        app.deliver(self.after, outcome)

    def after(self, outcome: actions.Outcome) -> None:
        app = _app(self)
        if outcome.then is not None:
            self.ask(outcome.then)
            return
        if outcome.undo is not None:
            app.last_undo = outcome.undo
        if outcome.undone:
            app.last_undo = None
        app.say(outcome.message)
        self._fresh.forget()
        self.poll()
