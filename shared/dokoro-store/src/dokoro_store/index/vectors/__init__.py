"""The vector index (door: :mod:`.index`): one interface, three engines chosen by
:mod:`.engines` — the exact scan over a :mod:`.row_matrix`, :mod:`.lance` and :mod:`.pgvector` —
over the arithmetic the embedders share too (:mod:`dokoro_store.index.arithmetic`).
"""
