"""The memory vector index (door: :mod:`.index`): every memory chunk's vector in one matrix per
process, and the facts a recall filters its rows on (:mod:`.facts`).
"""
