"""Issues, features and the week as documents: found by ``search_universal``, ``dokoro search``
and listed by ``dokoro list`` like everything else an agent writes.

Each issue and feature is one row of ``docs`` (``issue:<id>``, ``feature:<id>``) whose text is its
rendering, whose status is the item's and whose file is the rendering under ``tracking/``; the
week's items are one document, ``week:<YYYY-Www>``. The rows stay the truth: a document is written
whenever its rendering is (an item added or moved, a hand edit read back, another agent's change
rendered here). It is indexed (chunks, vectors) by the next search, which brings every changed
document in step first (``store.search.refresh``): a tracking call stays light, loading neither the
embedder nor the vector engine. An item without a document (written before items were documents)
is given one by the next tracking call, a bounded batch at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlmodel import col, exists, select

from dokoro_store.db.engine import Database
from dokoro_store.models.docs import Doc
from dokoro_store.models.tracking import TrackingItem
from dokoro_store.procedural.tracking.items import ItemService
from dokoro_store.procedural.tracking.markdown import item_path, render_item

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import DocumentService

__all__ = ["BACKFILL", "TrackingDocuments", "doc_id_of"]

BACKFILL = 200  # items given their first document per tracking call, at most


def doc_id_of(item: TrackingItem) -> str:
    return f"{item.kind}:{item.id}"


class TrackingDocuments:
    """Writes and indexes the documents of tracking items and of the week."""

    def __init__(self, db: Database, items: ItemService, docs: DocumentService) -> None:
        self._db = db
        self._items = items
        self._docs = docs

    def undocumented(self, limit: int = BACKFILL) -> list[str]:
        """Items that have no document yet (at most ``limit``)."""
        has_doc = exists().where(col(Doc.id) == col(TrackingItem.kind) + ":" + col(TrackingItem.id))
        with self._db.read() as session:
            return list(session.exec(select(TrackingItem.id).where(~has_doc).limit(limit)))

    def write(self, item_ids: Sequence[str], week: tuple[str, str] | None = None) -> list[str]:
        """Save the documents of ``item_ids`` (and of the week: its ISO name and text), for the next
        search to index; the document ids written."""
        wanted = list(dict.fromkeys(item_ids))
        with self._db.read() as session:
            rows = list(session.exec(select(TrackingItem).where(col(TrackingItem.id).in_(wanted)))) if wanted else []
        events = self._items.events([row.id for row in rows])
        written: list[str] = []
        with self._db.write() as session:
            for row in rows:
                detail = row.category if row.kind == "issue" else row.complexity
                self._docs.save_in(
                    session,
                    doc_id_of(row),
                    render_item(row, events[row.id]),
                    title=row.title,
                    filepath=item_path(row),
                    doc_type=row.kind,
                    status=row.status,
                    priority=row.priority,
                    metadata={"tracking": row.kind, **({"category": detail} if detail else {})},
                )
                written.append(doc_id_of(row))
            if week is not None:
                name, text = week
                self._docs.save_in(
                    session,
                    f"week:{name}",
                    text,
                    title=f"Week {name}",
                    filepath="currentWeek.md",
                    doc_type="week",
                    status="active",
                    metadata={"tracking": "week"},
                )
                written.append(f"week:{name}")
        return written
