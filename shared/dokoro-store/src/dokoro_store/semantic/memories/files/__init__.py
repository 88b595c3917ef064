"""Memories as markdown files a person can read, edit and keep in git (door: :mod:`.sync`).

One sync engine: the listing of what changed (:mod:`.scan`), files → rows (:mod:`.reconcile`),
rows → files (:mod:`.render`), the rows it reads and writes (:mod:`.rows`), one run's report
(:mod:`.run`), the manifest of what was last seen (:mod:`.manifest`) and one memory as a file
(:mod:`.markdown`).
"""
