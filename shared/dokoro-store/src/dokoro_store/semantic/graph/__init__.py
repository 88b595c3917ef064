"""The bi-temporal entity graph (door: :mod:`.service`, ``store.graph``).

Its storage (:mod:`.storage`), its reads (:mod:`.queries`), extraction from text
(:mod:`.extraction`: regular expressions, a local model, their merge) and the pass that extracts
every indexed document into the graph (:mod:`.indexer`).
"""
