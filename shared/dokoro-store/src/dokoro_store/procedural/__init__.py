"""Procedural memory: how do I do it, and what is the plan?

- :mod:`.plans` — plans and their items (``store.plans``).
- :mod:`.planning` — planning helpers answered from hybrid search (``store.planning``).
- :mod:`.archive` — the archive sweep of old dailies and finished plans (``store.archive``).
- :mod:`.tracking` — issues, features, the week, task timers (``store.tracking``).
- :mod:`.analytics` — velocity, timeline, pending work, weekly compression (``store.analytics``).

Rules and guardrails are typed memories (:mod:`dokoro_store.semantic.memories`), surfaced in the
briefing (:mod:`dokoro_store.briefing`).
"""
