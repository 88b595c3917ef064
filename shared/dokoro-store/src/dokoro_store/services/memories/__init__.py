"""The memory wing: typed memories, their conflict gate, recall, review queue and markdown files.

- :mod:`.service`: :class:`~.service.MemoryService` (``store.memories``), remember, verdict,
  recall, forget, status, and the drafts a bulk import hands it;
- :mod:`.rows`: the kinds, trust levels and states of a memory, its document, a row as a result;
- :mod:`.gate`: the conflict gate (close neighbours of a new memory, each shown once);
- :mod:`.vectors`: the active memories' vectors in one matrix (the gate's nearest neighbours);
- :mod:`.chunks`: every memory chunk's vector in one matrix (recall's vector leg on a large store);
- :mod:`.recall`: ranking with weathering;
- :mod:`.review`: the review queue (``DOKORO_MEMORY_REVIEW``);
- :mod:`.status`: the health report;
- :mod:`.files`, :mod:`.markdown`, :mod:`.manifest`, :mod:`.dictionary`: the memories as
  markdown files a person can edit, the folder's manifest, and the synonyms dictionary.
"""
