"""Semantic memory: what do I know?

- :mod:`.documents` — documents, their indexing and the workspace markdown (``store.docs``).
- :mod:`.search` — hybrid search over the documents (``store.search``).
- :mod:`.graph` — the bi-temporal entity graph and entity extraction (``store.graph``).
- :mod:`.memories` — typed memories: remember, the conflict gate, recall, files, upkeep
  (``store.memories``).
"""
