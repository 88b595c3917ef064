"""Text the tracking tools share: an item's line, and what the reconcile of hand edits did."""

from __future__ import annotations

from collections.abc import Sequence

from dokoro_store.results.tracking import ReconcileNote, TrackingItemView

_PRIORITY = {"critical": "🔴", "high": "🟠", "medium": "🟡", "low": "🟢"}


def item_line(item: TrackingItemView) -> str:
    kind = item.category if item.kind == "issue" else item.complexity
    return (
        f"- {_PRIORITY.get(item.priority, '•')} **{item.title}** `{item.id}` — {item.status}, {item.priority}, "
        f"{kind}, est. {item.estimate} (`{item.path}`)"
    )


def reconciled(notes: Sequence[ReconcileNote]) -> list[str]:
    if not notes:
        return []
    return ["", "**Hand edits read back first:**", *(f"- `{n.path}` ({n.action}): {n.detail}" for n in notes)]
