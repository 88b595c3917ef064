"""Indexing listeners: the hook for entity extraction (and anything else that follows indexing).

Anything that must run whenever a document is indexed registers a callable on the store::

    def extract(doc: IndexedDocument) -> None:
        ...  # doc.doc_id, doc.title, doc.content, doc.filepath, doc.doc_type, doc.reason

    store.docs.on_indexed(extract)

A listener registered with ``batch=True`` gets the documents of one indexing batch in one call
(``Sequence[IndexedDocument]``): it can read and write for all of them in a few statements.

It is called after the document's chunks are committed, once per document whose content is new
or changed (``reason`` = ``"new"`` / ``"changed"``) or re-indexed by a full reindex (``"full"``) —
whichever path got it there: a tool (``search_index_content``, ``dokoro_workspace_dump``), the
reconcile of hand-edited workspace markdown, ``dokoro migrate`` or ``dokoro reindex``. Re-embedding
alone (``dokoro reembed``) does not call it: the content did not change. A listener that raises is
logged and skipped; it never fails the indexing nor the other listeners. Listeners run in the
indexing process, synchronously: keep them quick or hand the work off.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from dokoro_store.semantic.documents.records import IndexedDocument, OnIndexed, OnIndexedBatch

__all__ = ["IndexListeners"]

log = logging.getLogger("dokoro.store")


class IndexListeners:
    """The listeners registered on one store's documents, called after each indexing write."""

    def __init__(self) -> None:
        self._each: list[OnIndexed] = []
        self._batch: list[OnIndexedBatch] = []

    def add(self, listener: OnIndexed) -> None:
        """Called once per document indexed from now on."""
        self._each.append(listener)

    def add_batch(self, listener: OnIndexedBatch) -> None:
        """Called once per indexing batch, with its documents."""
        self._batch.append(listener)

    def notify(self, docs: Sequence[IndexedDocument]) -> None:
        """Tell every listener about ``docs`` (just committed); a listener that raises is logged."""
        if not docs:
            return
        for many in list(self._batch):
            try:
                many(docs)
            except Exception:  # a listener must never break indexing (or the other listeners)
                log.exception("dokoro: indexing listener %r failed on %d documents", many, len(docs))
        for doc in docs:
            for listener in list(self._each):
                try:
                    listener(doc)
                except Exception:  # a listener must never break indexing (or the other listeners)
                    log.exception("dokoro: indexing listener %r failed on %s", listener, doc.doc_id)
