"""Work the store does behind the writes, and what it has to tell the agent once.

- :mod:`.write_behind` — :class:`~.write_behind.DelayedStep`: one step run on a background thread a
  moment after the first write (embedding vectors, copying them to LanceDB, a WAL checkpoint).
- :mod:`.announcements` — notices the next tool answer carries once (an embedder switched, ...).

Stdlib only: every layer may use it.
"""
