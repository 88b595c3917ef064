"""Retired and stale memories in a ranking: below every current match, and saying what they are.

A memory that was superseded, archived or deprecated (forgotten) still holds words and meaning
that match a query, often better than the memory that replaced it ("use JWT" vs "use opaque
session tokens"). Whatever tool ranks it (``search_universal``, ``dokoro_recall`` with
``include_archived``, ``bridge_get_context``), the agent must not read it as the answer: **a retired
memory ranks below every current document that matches, and its hit says its state in the text.**

A memory still in force may be **stale**: past its ``valid_until`` or its ``review_after``, or
depending (``depends_on``, ``memory_links``) on a memory retired since it was last renewed. Stale
is computed here at read (no background job): a stale memory ranks below every current match and
above every retired one, and its hit says "stale" and why. Within each tier the ranking is the
search's.

The states are read here from the ``memories`` rows of the candidate memory documents
(``memory:<id>``, :data:`~dokoro_store.index.scope.MEMORY_DOC_PREFIX`) and their links: two
indexed queries by primary key over the few ranked candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from sqlalchemy import Connection

from dokoro_store.clock import iso
from dokoro_store.db.driver_sql import rows_by_ids
from dokoro_store.db.engine import Database
from dokoro_store.db.types import utc_from_db
from dokoro_store.index.scope import MEMORY_DOC_PREFIX
from dokoro_store.semantic.memories.switches import hidden_types

__all__ = [
    "RETIRED_STATES",
    "Standing",
    "broken_dependencies",
    "demote_retired",
    "dependency_words",
    "describe",
    "retired",
    "stale_words",
    "standing",
]

RETIRED_STATES = ("archived", "deprecated")
# The memory links whose memory depends on one retired (or purged) and was not renewed since:
# ``id`` is the dependent memory. Read by primary key of the dependents (``rows_by_ids``).
_BROKEN_LINKS = (
    "SELECT id, depends_on, state, superseded_by FROM (SELECT l.memory_id AS id, l.depends_on, t.state, "
    "t.superseded_by FROM memory_links l LEFT JOIN memories t ON t.id = l.depends_on WHERE l.checked_at IS NULL "
    "AND (t.id IS NULL OR t.state IN ('archived', 'deprecated'))) AS broken"
)
T = TypeVar("T")


def describe(
    state: str, superseded_by: str | None, reason: str | None, valid_until: datetime | None, now: datetime
) -> str | None:
    """What retired a memory, in words (None: it is in force; it may still be stale, :func:`stale_words`).
    ``valid_until`` and ``now`` are kept for the callers' signature: a date past makes a memory stale, not retired."""
    del valid_until, now
    if state == "archived" and superseded_by:
        return f"superseded by {superseded_by}"
    if state in RETIRED_STATES:
        return state + (f": {reason}" if reason else "")
    return None


def stale_words(
    state: str,
    review_after: datetime | None,
    valid_until: datetime | None,
    now: datetime,
    broken: Sequence[str] = (),
) -> str | None:
    """Why a memory in force is stale, in words starting with "stale" (None: current, or retired).
    ``broken``: its dependencies retired since it was last renewed, each in words."""
    if state in RETIRED_STATES:
        return None
    why: list[str] = []
    if valid_until is not None and valid_until <= now:
        why.append(f"past valid_until {iso(valid_until)}")
    if review_after is not None and review_after <= now:
        why.append(f"due for review since {iso(review_after)}")
    why += list(broken)
    return f"stale: {'; '.join(why)}" if why else None


def dependency_words(depends_on: str, state: str | None, superseded_by: str | None) -> str:
    """A dependency that retired, in words."""
    if state is None:
        return f"depends on {depends_on}, which was purged"
    if state == "archived" and superseded_by:
        return f"depends on {depends_on}, superseded by {superseded_by}"
    return f"depends on {depends_on}, which is {state}"


def broken_dependencies(connection: Connection, memory_ids: Sequence[str]) -> dict[str, list[str]]:
    """Of ``memory_ids``, the memories with a dependency retired since they were last renewed:
    memory id → each such dependency in words."""
    out: dict[str, list[str]] = {}
    for memory_id, depends_on, state, superseded_by in rows_by_ids(connection, _BROKEN_LINKS, list(memory_ids)):
        out.setdefault(str(memory_id), []).append(dependency_words(str(depends_on), state, superseded_by))
    for words in out.values():
        words.sort()
    return out


@dataclass(frozen=True)
class Standing:
    """The memory documents among a ranking's candidates that are not current: document id → words;
    and those of a type switched off (:mod:`.switches`), which no ranking shows."""

    retired: dict[str, str] = field(default_factory=dict)
    stale: dict[str, str] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)


def standing(db: Database, doc_ids: Sequence[str], now: datetime) -> Standing:
    """Of ``doc_ids``, the memory documents whose memory is retired or stale, each in words."""
    memory_ids = [d[len(MEMORY_DOC_PREFIX) :] for d in dict.fromkeys(doc_ids) if d.startswith(MEMORY_DOC_PREFIX)]
    if not memory_ids:
        return Standing()
    out = Standing()
    with db.read() as session:
        if off := hidden_types(session):
            # The names are the vocabulary's (MEMORY_TYPES), never a caller's text.
            kinds = ", ".join(f"'{kind}'" for kind in off)
            found = rows_by_ids(session.connection(), "SELECT id FROM memories", memory_ids, f"AND type IN ({kinds})")
            out.hidden.update(f"{MEMORY_DOC_PREFIX}{row[0]}" for row in found)
        connection = session.connection()
        rows = rows_by_ids(
            connection,
            "SELECT id, state, superseded_by, state_reason, review_after, valid_until FROM memories",
            memory_ids,
            "AND (state IN ('archived', 'deprecated') OR valid_until IS NOT NULL OR review_after IS NOT NULL)",
        )
        broken = broken_dependencies(connection, memory_ids)
    dated = {str(r[0]): r for r in rows}
    for memory_id in memory_ids:
        doc_id = f"{MEMORY_DOC_PREFIX}{memory_id}"
        row = dated.get(memory_id)
        if row is None:
            if memory_id in broken:
                out.stale[doc_id] = f"stale: {'; '.join(broken[memory_id])}"
            continue
        _id, state, superseded_by, reason, review_after, valid_until = row
        words = describe(str(state), superseded_by, reason, None, now)
        if words is not None:
            out.retired[doc_id] = words
        elif (
            stale := stale_words(
                str(state), utc_from_db(review_after), utc_from_db(valid_until), now, broken.get(memory_id, ())
            )
        ) is not None:
            out.stale[doc_id] = stale
    return out


def retired(db: Database, doc_ids: Sequence[str], now: datetime) -> dict[str, str]:
    """Of ``doc_ids``, the memory documents whose memory is retired: document id → its state in words."""
    return standing(db, doc_ids, now).retired


def demote_retired(
    ranked: list[T],
    key: Callable[[T], str],
    retired_ids: dict[str, str] | set[str],
    stale_ids: dict[str, str] | set[str] | None = None,
) -> list[T]:
    """``ranked`` with the stale entries moved below every current one and the retired below every
    stale one, each part in its order."""
    stale_ids = stale_ids or set()
    if not retired_ids and not stale_ids:
        return ranked

    def tier(entry: T) -> int:
        name = key(entry)
        return 2 if name in retired_ids else 1 if name in stale_ids else 0

    return sorted(ranked, key=tier)  # stable: each tier keeps its order
