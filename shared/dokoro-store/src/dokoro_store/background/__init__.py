"""Work a store does behind the writes, and what it has to tell the agent once.

- :mod:`.steps` — :class:`~.steps.Background`: one store's registry of background work
  (``store.background``: every step and thread pool, listed by name), and
  :class:`~.steps.DelayedStep`, one step run on a background thread a moment after the write that
  needs it (embedding vectors, copying them to LanceDB, extracting entities, a WAL checkpoint),
  giving way to the foreground;
- :mod:`.write_behind` — :class:`~.write_behind.WriteBehind`: the one write-behind protocol (mark,
  step in batches, resume, finish) of summaries' and documents' vectors;
- :mod:`.announcements` — notices the next tool answer carries once (``store.announcements``).

Stdlib only: every layer may use it. Nothing here lives at module level: each store has its own.
"""
