"""What the memory vector index (:mod:`.memory_index`) filters its rows on: a recall's
:class:`~.scope.MemoryScope` as a mask over the rows' state, type and creation time columns, and
the creation times as integers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from dokoro_store.clock import parse_iso

if TYPE_CHECKING:
    from dokoro_store.index.scope import MemoryScope
    from dokoro_store.index.vectors.row_matrix import RowMatrix

__all__ = ["all_micros", "micros", "scope_mask"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(when: datetime) -> int:
    """Microseconds since the epoch (a naive time is UTC, as the database stores it)."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(microseconds=1)


def all_micros(values: Sequence[Any]) -> Any:
    """:func:`micros` of many creation times as stored, as an int64 array: SQLite's fixed-width ISO
    text in one numpy call (one by one if any is not in that form), PostgreSQL's datetimes one by one."""
    import numpy as np

    if values and isinstance(values[0], str):
        try:
            stored = np.array(values, dtype="U28")
            if bool(np.all(np.char.str_len(stored) == 27)) and bool(np.all(np.char.endswith(stored, "Z"))):
                return stored.astype("U26").astype("datetime64[us]").astype(np.int64)  # "U26": without the Z
        except (TypeError, ValueError):
            pass
    return np.array([micros(v if isinstance(v, datetime) else parse_iso(str(v))) for v in values], dtype=np.int64)


def scope_mask(
    held: RowMatrix, memory: MemoryScope, codes: Mapping[str, int], named_rows: Callable[[str], list[int]]
) -> Any:
    """The rows of ``held`` that ``memory`` allows, as a boolean mask (None: every row). ``codes``:
    state and type names → the codes in the columns; ``named_rows``: the rows of the memories
    naming an entity."""
    import numpy as np

    mask: Any = None

    def narrow(condition: Any) -> None:
        nonlocal mask
        mask = condition if mask is None else mask & condition

    if memory.states:
        narrow(np.isin(held.column("state"), [codes.get(s, -1) for s in memory.states]))
    if memory.types:
        narrow(np.isin(held.column("type"), [codes.get(t, -1) for t in memory.types]))
    if memory.since is not None:
        narrow(held.column("created") >= micros(memory.since))
    if memory.until is not None:
        narrow(held.column("created") <= micros(memory.until))
    if memory.entity:
        named = np.zeros(len(held), dtype=bool)
        named[named_rows(memory.entity)] = True
        narrow(named)
    return mask
