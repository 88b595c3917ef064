"""The typed results of the store's services: what a tool returns, defined once.

One module per layer (``results/memories.py``, ``results/working.py``, …), pure pydantic and
the standard library only: a server imports them at registration time to publish its tools'
output schemas, so they must never pull in SQLAlchemy, SQLModel or numpy (a test checks this).
Services build and return these models; tools return them unchanged (``result(text, model)``).
"""
