"""Memories as markdown files a person can read, edit and keep in git (door: :mod:`.sync`).

One sync engine: the listing of what changed (:mod:`.scan`), files → rows (:mod:`.reconcile`, with
the caller's rights only: :mod:`.authority`), rows → files (:mod:`.render`), the rows it reads and
writes (:mod:`.rows`), one run's report (:mod:`.run`), the manifest of what was last seen
(:mod:`.manifest`), one memory as a file (:mod:`.markdown`), the ledger a rebuild needs beside the
files (:mod:`.ledger`), the rebuild itself, forward only (:mod:`.reindex`), and the read-only look
the status and the briefing take (:mod:`.look`).
"""
