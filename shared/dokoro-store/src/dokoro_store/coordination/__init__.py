"""Coordination: who else is working here? (door: :mod:`.service`, ``store.coord``)

Presence (:mod:`.presence`), advisory file claims (:mod:`.claims`), shared notes (:mod:`.notes`),
blocks (:mod:`.blocks`) and handoffs (:mod:`.handoffs`).
"""
