"""Documents of the store and their index (door: :mod:`.service`, ``store.docs``).

- :mod:`.service` — saving, chunking, embedding and telling listeners; :mod:`.records`, :mod:`.rows`.
- :mod:`.indexing` — the indexing work: a batch (:mod:`.indexing.batch`), a pass over many
  (:mod:`.indexing.pipeline`), the index's status, listeners and the write-behind of vectors.
- :mod:`.threads` — the conversation or session a document belongs to.
- :mod:`.markdown`, :mod:`.workspace`, :mod:`.markdown_search` — workspace markdown as documents,
  kept in step, and grep-style search over it.
- :mod:`.board` — the documents as a person's work board (``dokoro list/get/update``).
"""
