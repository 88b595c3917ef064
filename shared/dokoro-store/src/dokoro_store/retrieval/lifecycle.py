"""Retired memories in a ranking: below every current match, and saying what they are.

A memory that was superseded, archived, deprecated (forgotten) or has outlived its ``valid_until``
still holds words and meaning that match a query, often better than the memory that replaced it
("use JWT" vs "use opaque session tokens"). Whatever tool ranks it (``search_universal``,
``dokoro_recall`` with ``include_archived``, ``bridge_get_context``), the agent must not read it as
the answer: **a retired memory ranks below every current document that matches, and its hit says
its state in the text.** Among the retired, and among the current, the ranking is the search's.

The state is read here from the ``memories`` rows of the candidate memory documents
(``memory:<id>``, :data:`~dokoro_store.retrieval.scope.MEMORY_DOC_PREFIX`): one indexed query by
primary key over the few ranked candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from dokoro_store.clock import iso
from dokoro_store.db.driver_sql import rows_by_ids
from dokoro_store.db.engine import Database
from dokoro_store.db.types import utc_from_db
from dokoro_store.retrieval.scope import MEMORY_DOC_PREFIX

__all__ = ["RETIRED_STATES", "demote_retired", "describe", "retired"]

RETIRED_STATES = ("archived", "deprecated")
T = TypeVar("T")


def describe(
    state: str, superseded_by: str | None, reason: str | None, valid_until: datetime | None, now: datetime
) -> str | None:
    """What retired a memory, in words (None: it is current)."""
    if state == "archived" and superseded_by:
        return f"superseded by {superseded_by}"
    if state in RETIRED_STATES:
        return state + (f": {reason}" if reason else "")
    if valid_until is not None and valid_until < now:
        return f"expired (valid until {iso(valid_until)})"
    return None


def retired(db: Database, doc_ids: Sequence[str], now: datetime) -> dict[str, str]:
    """Of ``doc_ids``, the memory documents whose memory is retired: document id → its state in words."""
    memory_ids = [d[len(MEMORY_DOC_PREFIX) :] for d in dict.fromkeys(doc_ids) if d.startswith(MEMORY_DOC_PREFIX)]
    if not memory_ids:
        return {}
    out: dict[str, str] = {}
    with db.read() as session:
        rows = rows_by_ids(
            session.connection(),
            "SELECT id, state, superseded_by, state_reason, valid_until FROM memories",
            memory_ids,
            "AND (state IN ('archived', 'deprecated') OR valid_until IS NOT NULL)",
        )
    for memory_id, state, superseded_by, reason, valid_until in rows:
        words = describe(str(state), superseded_by, reason, utc_from_db(valid_until), now)
        if words is not None:
            out[f"{MEMORY_DOC_PREFIX}{memory_id}"] = words
    return out


def demote_retired(ranked: list[T], key: Callable[[T], str], retired_ids: dict[str, str] | set[str]) -> list[T]:
    """``ranked`` with the retired entries moved below every current one, each part in its order."""
    if not retired_ids:
        return ranked
    return [r for r in ranked if key(r) not in retired_ids] + [r for r in ranked if key(r) in retired_ids]
