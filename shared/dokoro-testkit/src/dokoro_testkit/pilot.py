"""Driving ``dokoro browse`` under Textual's Pilot: the waits and steps its tests share.

Every wait is on the app's own state, never a wall-clock budget: only a hang reaches
:data:`HANG_SECONDS`. The screens are imported when a helper runs (``dokoro`` is the package under
test, not a dependency of the kit).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["HANG_SECONDS", "ask", "labels", "open_category", "select", "until"]

# Only a hang reaches this: the app answers every awaited state in seconds, however loaded the
# machine (no test waits more than a minute for anything).
HANG_SECONDS = 60


async def until(pilot: Any, condition: Callable[[], bool]) -> None:
    """Let the app run until ``condition()`` holds, however long a loaded machine takes. Each round
    the app handles what it has queued (a worker's result, a key, a toast); then the test waits one
    of the app's poll intervals, the pace at which the app itself looks for changes."""
    hang = time.monotonic() + HANG_SECONDS
    while not condition():
        await pilot.pause()
        if not condition():
            assert time.monotonic() < hang, f"the app never reached the awaited state in {HANG_SECONDS} s: a hang"
            await pilot.pause(pilot.app.poll_seconds)


def labels(app: Any) -> list[str]:
    """The labels of the items the current screen shows, in order."""
    return [item.label for item in app.screen.shown]


async def open_category(pilot: Any, app: Any, category: str) -> Any:
    """Wait for the items screen of ``category`` to be loaded; return it."""
    from dokoro.browse.screens import ItemsScreen

    await until(pilot, lambda: isinstance(app.screen, ItemsScreen) and app.screen.loaded.is_set())
    assert app.screen.category.id == category
    return app.screen


async def select(pilot: Any, app: Any, label: str) -> None:
    """Highlight the item labelled ``label``."""
    app.screen.query_one("#items").highlighted = labels(app).index(label)
    await pilot.pause()


async def ask(pilot: Any, app: Any, key: str) -> str:
    """Press ``key`` and wait for its y/n question; return the prompt (the answer is the caller's)."""
    from dokoro.browse.screens import ConfirmScreen

    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    return str(app.screen.prompt)
