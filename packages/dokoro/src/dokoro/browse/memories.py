"""The memories in ``dokoro browse``: the Memories category, the Stale memories category and a
memory's preview card.

A stale memory (past its ``valid_until`` or ``review_after``, or depending on a retired memory:
``store.upkeep.review``) carries a ``⚠ stale`` flag in its row and why in its preview; ``n`` renews
it (:func:`renewal`: each past date pushed :data:`RENEW_DAYS` on, as the y/n prompt says) and ``f``
retires it (deprecated, history kept), each after a y/n (:mod:`.actions`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from dokoro.browse.items import Item, _stamp

if TYPE_CHECKING:
    from dokoro_store import Store
    from dokoro_store.results.memories import Memory

__all__ = ["MEMORY_LIMIT", "RENEW_DAYS", "memory_card", "memory_items", "renewal", "stale_items", "stale_reasons"]

MEMORY_LIMIT = 1000  # the most recently changed memories; `/` (semantic search) reaches the rest
STALE_SHOWN = 1000  # the stale memories flagged and listed (the longest overdue first)
RENEW_DAYS = 90  # how far `n` pushes a past review_after / valid_until beyond now
IN_FORCE = ("active", "proposed")
_ISO = re.compile(r"(\d{4}-\d\d-\d\d)T[\d:]+Z")


def stale_reasons(store: Store) -> dict[str, str]:
    """The stale memories (the longest overdue first) → why, in words starting with "stale"."""
    return {entry.memory.id: entry.stale for entry in store.upkeep.review(limit=STALE_SHOWN).stale}


def _flag(stale: str) -> str:
    """The row's short form, to keep a row in 80 columns: ``⚠ stale: expired 2026-06-01``,
    ``review due 2026-06-01`` (dates without their time); the preview has the store's words."""
    short = _ISO.sub(r"\1", stale).replace("past valid_until", "expired").replace("due for review since", "review due")
    return f"⚠ {short}"


def _item(memory: Memory, stale: str | None) -> Item:
    waiting = memory.state == "proposed"
    state = "proposed, waits for review (v approve · x reject)" if waiting else memory.state
    return Item(
        id=f"memory:{memory.id}",
        label=memory.title,
        # A stale row keeps to 80 columns: its trust is in the preview, its keys in the status line.
        sublabel=f"{memory.type} · {state}" if stale else f"{memory.type} · {memory.trust} · {state}",
        kind="memory",
        archived=memory.state not in IN_FORCE,
        ref=memory.id,
        status=memory.state,
        dim=memory.state not in IN_FORCE,
        flag=_flag(stale) if stale else "",
    )


def memory_items(store: Store) -> list[Item]:
    """Every type's memories, the most recently changed first; stale ones flagged."""
    from dokoro_store import MEMORY_TYPES

    states = ("proposed", "active", "archived", "deprecated")
    stale = stale_reasons(store)
    return [_item(m, stale.get(m.id)) for m in store.memories.of_types(MEMORY_TYPES, states, limit=MEMORY_LIMIT)]


def stale_items(store: Store) -> list[Item]:
    """The stale memories, the longest overdue first: renew (``n``) or retire (``f``) them."""
    return [_item(entry.memory, entry.stale) for entry in store.upkeep.review(limit=STALE_SHOWN).stale]


def renewal(memory: Memory, now: datetime) -> dict[str, datetime]:
    """The dates ``n`` sets: each of ``review_after`` / ``valid_until`` that is past, :data:`RENEW_DAYS`
    after ``now`` (none when only a retired dependency makes it stale: renewing confirms it holds)."""
    later = now + timedelta(days=RENEW_DAYS)
    dates = (("review_after", memory.review_after), ("valid_until", memory.valid_until))
    return {name: later for name, when in dates if when is not None and when <= now}


def memory_card(store: Store, memory_id: str) -> str:
    """A memory's preview: its fields, its dates, why it is stale (and what to do), its body."""
    from dokoro_store import stale_words

    memory = store.memories.get(memory_id)
    stale = stale_reasons(store).get(memory.id) or stale_words(
        memory.state, memory.review_after, memory.valid_until, store.clock.now()
    )
    lines = [
        f"# {memory.title}",
        "",
        f"- **Type:** {memory.type}",
        f"- **Trust:** {memory.trust}",
        f"- **State:** {memory.state}" + (f" ({memory.state_reason})" if memory.state_reason else ""),
        f"- **Entities:** {', '.join(memory.entities) or '-'}",
        f"- **Updated:** {_stamp(memory.updated_at)}",
        f"- **Recalled:** {memory.recall_count} time(s)",
    ]
    if memory.review_after is not None or memory.valid_until is not None:
        lines.append(f"- **Review after:** {_stamp(memory.review_after)}")
        lines.append(f"- **Valid until:** {_stamp(memory.valid_until)}")
    if stale:
        lines += [
            "",
            f"**⚠ {stale}**",
            "",
            f"n renews it (past dates + {RENEW_DAYS} days) · f retires it · each asks y/n",
        ]
    lines += ["", memory.body]
    return "\n".join(lines)
