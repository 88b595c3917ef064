"""Moving in and out of a store.

- :mod:`.backup` — JSON backups and a restore that never overwrites (``dokoro export/import``).
- :mod:`.transfer` — rows as portable data; copying a store between databases.
- :mod:`.original` — the original TypeScript dokoro's stores, read and moved in.
- :mod:`.importers` — the MCP memory server's graph, basic-memory and Obsidian folders.
- :mod:`.bridge` — the tachibot bridge: what another agent tool found, kept here.
"""
