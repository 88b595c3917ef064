"""Planning helpers (door: :mod:`.service`, ``store.planning``): what an answer draws on
(:mod:`.sources`) and the markdown they write (:mod:`.markdown`).
"""
