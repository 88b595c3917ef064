"""Affective memory: which tools can I trust? (``store.feedback``)

- :mod:`.service` (door) — outcomes recorded, tallied, and routes by a Wilson lower bound with decay.
- :mod:`.log` — the outcomes one by one, newest first.
"""
