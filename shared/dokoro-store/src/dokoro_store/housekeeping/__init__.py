"""The store's own upkeep, as a person runs it from the command line.

- :mod:`.init` — lay out a new dokoro folder (``dokoro init``).
- :mod:`.gitignore` — the store's ``.gitignore``, written by every path that creates a store.
- :mod:`.health` — what ``dokoro doctor`` reports: the parts of a store really in use.
- :mod:`.secret_scan` — secrets already stored, found and redacted (``dokoro doctor --scan-secrets``).
- :mod:`.cleanup` — duplicate and old markdown files moved to the archive (``dokoro cleanup``).
- :mod:`.tokens` — bearer tokens of the shared HTTP server, stored hashed.
"""
