"""Working memory: what am I doing right now? (``store.working``)

- :mod:`.workspace` — claim the workspace, its status, the session log and the dump (door:
  :mod:`.workspace.service`).
- :mod:`.current` — ``current.md``: the live working file and its sections.
- :mod:`.lock` — the workspace lock file ``.mcp/workspace.lock``: who holds the workspace (every
  writer of the workspace and of ``current.md`` reads it).
- :mod:`.questions`, :mod:`.assets` — open questions (rows every agent sees) and files kept under ``assets/``.
- :mod:`.work_sessions` — sessions a person opens and closes (``dokoro session``).
- :mod:`.context_inspect` — what a client put into an agent's context, logged and read back.
"""
