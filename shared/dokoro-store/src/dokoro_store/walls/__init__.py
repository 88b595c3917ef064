"""The store's walls: the rules it enforces below every service, whichever tool wrote.

- :mod:`.secrets` (door) + :mod:`.secret_values` — redaction of credentials from every text written.
- :mod:`.containment` — no file access leaves the folder it belongs to, symlinks included.
- :mod:`.files` — atomic file replacement and cross-process file locks.
- :mod:`.frontmatter` — YAML front matter of files a person edits: bounded, safe, lenient.
- :mod:`.ownership` — when one agent's call must not touch another agent's data.
- :mod:`.names` — validation of the names agents pass around (agent ids, tool names, keys).

Foundations: nothing here imports a memory layer, the index or the database.
"""
