"""The memory wing: typed memories, their conflict gate, recall, review queue and markdown files.

- :mod:`.service`: :class:`~.service.MemoryService` (``store.memories``), the wing's front: get,
  remember, verdict, recall, forget, status, the review queue, the files;
- :mod:`.remember`: the route of a remember (below), with its retry check;
- :mod:`.bulk`: the drafts of a bulk import and their rows; :mod:`.verdicts`: verdicts on the
  gate's pairs; :mod:`.docs`: a memory's document in the store's index;
- :mod:`.repository`: the only writer of memory rows, their entities, links and the conflict ledger;
- :mod:`.rows`: the kinds, trust levels and states of a memory, its document, a row as a result;
- :mod:`.gate`: the conflict gate (close neighbours of a new memory, each shown once);
- :mod:`.recall`: ranking with weathering;
- :mod:`.review`: the review queue (``DOKORO_MEMORY_REVIEW``);
- :mod:`.status`: the health report;
- :mod:`.staleness`, :mod:`.health`, :mod:`.usage`, :mod:`.upkeep`, :mod:`.switches`: stale memories
  (past a date, or a ``depends_on`` target retired) computed at read, the one-line health nudge, the
  use of each type, renewal and the review list (``store.upkeep``), and the per-type switches;
- :mod:`.proposals` (:mod:`.proposals.service`, :mod:`.proposals.proposers`, :mod:`.proposals.ledger`,
  :mod:`.proposals.summaries`): the upkeep the store proposes (merge, summarise, prune, guardrail)
  with its evidence, applied only once approved (a summary's draft, or the approver's distilled text);
- :mod:`.onboarding`: a project's own files read as hostile input and proposed as typed memories
  (``store.onboarding``, ``dokoro onboard``);
- :mod:`.files`, one sync engine (:mod:`.files.sync` and its parts :mod:`.files.scan`,
  :mod:`.files.reconcile`, :mod:`.files.authority`, :mod:`.files.render`, :mod:`.files.rows`,
  :mod:`.files.run`, :mod:`.files.markdown`, :mod:`.files.manifest`, :mod:`.files.ledger`,
  :mod:`.files.reindex`, :mod:`.files.look`), and :mod:`.dictionary`: the memories as markdown
  files a person can edit (content, never authority), the folder's manifest and ledger, the rebuild
  forward only, the synonyms dictionary; :mod:`.repair`: rows an earlier version let in that no file
  can hold (``dokoro doctor --fix``);
- :mod:`.vectors` and :mod:`.lifecycle`: the memory vector index and how retired and stale
  memories rank (both used by the search).

**The route of a remember** (``dokoro_remember`` → :meth:`~.service.MemoryService.remember` →
:meth:`~.remember.Remember.remember`), one pass:

1. validation, once: type, trust, title and body, the two dates, ``depends_on``, checked here (the
   MCP tool's schema bounds only the arguments' shapes and sizes, and passes them through); the
   store's per-type switches: a type agents may not write is refused, nothing prepared;
2. files reconciliation: the memory files reconciled (a bounded share: at most
   :data:`~.files.sync.READS_PER_CALL` files, a second's wait for another process at most, never the
   call's failure);
3. redaction at the boundary: title, body and source are redacted here, before anything is built
   from them (a file's fields where the file is read, :mod:`.files.reconcile`); the layers below
   keep their own scanners as a wall (the repository's plain inserts, the document index), so the
   already clean text is scanned again there and nothing new is found;
4. the document chunked and embedded outside the write lock (a memory whose vectors cannot join the
   index is not stored at all);
5. one write transaction: the retry check (an identical call moments ago returns its memory), the
   superseded memory archived (not while the new one is a proposal under review), the row and its
   entities (:mod:`.repository`), its ``depends_on`` links, its document with chunks and vectors,
   and the conflict gate on it, its pairs written to the ledger (:mod:`.gate`);
6. after the commit (nothing fails the call from here): the vector engine's copy, and the memory's
   file rendered (:meth:`~.files.sync.MemoryFiles.render_written`; left to a later call when the folder
   is busy).

**The route of a recall** (``dokoro_recall`` → :meth:`~.service.MemoryService.recall_answer`),
one pass: the arguments checked once (by :mod:`.recall`, past the tool's schema); the memory
files reconciled as above; the hybrid search scoped to the memory documents of the wanted types and states (full text,
vectors: :mod:`dokoro_store.semantic.memories.vectors.index` on a large store, and the entity graph); the
rows of the hits read, ranked with weathering (:mod:`.recall`), their use counted (no memory file is
written: use counts go to the folder's ledger, a while later); the answer carries the hits and what
the reconcile picked up.

**Rules between agents.** Under review every memory an agent remembers waits as proposed,
whatever trust it claims; only a person approves (CLI, TUI, their own files). A verdict is
accepted for a pair the gate proposed to the calling agent, or on memories it may change.
"""
