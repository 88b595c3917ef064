"""Hybrid search over the documents (door: :mod:`.service`, ``store.search``): full text and
vectors fused by score, the memory vector leg, graph and recency signals, the re-ranker
(engines in :mod:`dokoro_store.index`); what a store's search uses (:mod:`.status`); ambient git
context as a query (:mod:`.ambient`).
"""
