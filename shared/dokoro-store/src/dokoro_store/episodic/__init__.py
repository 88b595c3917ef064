"""Episodic memory: what did I do before? (``store.episodic``)

- :mod:`.service` (door) — session summaries, recall and automatic compaction.
- :mod:`.compaction` — the two committed steps of a compaction (mark, fold) and its recovery.
- :mod:`.ranking` — how recall filters and ranks summaries.
- :mod:`.results` — what the layer answers and the limits it keeps.
- :mod:`.summary_search`, :mod:`.summary_vectors` — recall's full-text and vector legs.
"""
