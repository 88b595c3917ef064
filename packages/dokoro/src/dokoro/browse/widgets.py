"""The pieces the screens of ``dokoro browse`` share: timings, sort orders, the help text, the
host app, and the crumbs, list and preview widgets."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, Static

from dokoro.browse.host import BrowseHost

PULSE_SECONDS = 0.8
ORDERS = ("default", "reverse", "label")
ORDER_NAMES = {"default": "as listed", "reverse": "reversed", "label": "by name"}

HELP = """\
[b]Navigation[/b]
  ↑/↓ move (scroll in a preview) · enter/→ open · esc/⌫/← back · PgUp/PgDn page · q quit
[b]Filter[/b] (items)
  /  filter as you type (fuzzy) · enter keeps it · esc clears it
[b]Sort[/b] (items)
  o  cycle the order: as listed → reversed → by name
[b]Search[/b] (items)
  s  semantic search over every document · enter runs · esc stops waiting, then restores
[b]Archive[/b] (daily files, plans)
  a  archive the selected plan or daily file · w archive a daily file into its week folder
  u  undo the last archive of this session
[b]Claims, plans, memories[/b]
  r  release a stale file claim (never a live holder's)
  p  advance a plan one step (draft → active → completed)
  e  edit a memory's file in $EDITOR (what you save becomes a new version)
  f  forget (retire) a memory (it is deprecated, never deleted)
  n  renew a stale memory (⚠): its past review/valid dates pushed 90 days on
  v  approve · x reject a memory an agent proposed (review queue), or a proposal (Proposals)
  Every change but your own edit asks y/n first.
[b]Help[/b]
  ?  this help · any key closes it"""


def _app(screen: Screen[Any]) -> BrowseHost:
    return cast(BrowseHost, screen.app)  # the BrowseApp hosting every screen of this module


class Crumbs(Static):
    """``dokoro › Category › Item``."""

    def __init__(self, *parts: str) -> None:
        text = Text("dokoro", style="bold")
        for part in parts:
            text.append(" › ", style="dim")
            text.append(part, style="bold")
        super().__init__(text, id="crumbs", markup=False)


class NavList(OptionList):
    """An option list where ← goes back and → opens (a plain one scrolls sideways)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "screen.back(True)", show=False),
        Binding("right", "screen.open", show=False),
    ]


class PreviewScroll(VerticalScroll):
    """The preview's scroller, where ← goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("left", "screen.back", show=False)]
