"""The memory wing: typed memories, their conflict gate, recall, review queue and markdown files.

- :mod:`.service`: :class:`~.service.MemoryService` (``store.memories``), remember, verdict,
  recall, forget, status, and the drafts a bulk import hands it;
- :mod:`.rows`: the kinds, trust levels and states of a memory, its document, a row as a result;
- :mod:`.gate`: the conflict gate (close neighbours of a new memory, each shown once);
- :mod:`.recall`: ranking with weathering;
- :mod:`.review`: the review queue (``DOKORO_MEMORY_REVIEW``);
- :mod:`.status`: the health report;
- :mod:`.proposals`, :mod:`.proposers`, :mod:`.proposal_ledger`: the upkeep the store proposes
  (merge, summarise, prune, guardrail) with its evidence, applied only once approved;
- :mod:`.files`, :mod:`.markdown`, :mod:`.manifest`, :mod:`.dictionary`: the memories as
  markdown files a person can edit, the folder's manifest, and the synonyms dictionary.

**The route of a remember** (``dokoro_remember`` → :meth:`~.service.MemoryService.remember`),
one pass: the arguments checked; the memory files reconciled (a bounded share: at most
:data:`~.files.READS_PER_CALL` files, a second's wait for another process at most, never the
call's failure); title, body and source redacted; the document chunked and embedded outside the
write lock; then one write transaction: the retry check (an identical call moments ago returns
its memory), the superseded memory archived (not while the new one is a proposal under review),
the row, its entities and its document with chunks and vectors, and the conflict gate's pairs;
after the commit, the vector engine's copy and the memory's file (left to a later call when the
folder is busy).

**The route of a recall** (``dokoro_recall`` → :meth:`~.service.MemoryService.recall_answer`),
one pass: the memory files reconciled as above; the hybrid search scoped to the memory documents
of the wanted types and states (full text, vectors: :mod:`dokoro_store.retrieval.memory_index` on a large store, and the
entity graph); the rows of the hits read, ranked with weathering (:mod:`.recall`), their use
counted; the answer carries the hits and what the reconcile picked up.

**Rules between agents.** Under review every memory an agent remembers waits as proposed,
whatever trust it claims; only a person approves (CLI, TUI, their own files). A verdict is
accepted for a pair the gate proposed to the calling agent, or on memories it may change.
"""
