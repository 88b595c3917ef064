"""Results of the context inspector: what went into an agent's context, logged and read back."""

from __future__ import annotations

from typing import Any

from dokoro_store.results.base import Result

__all__ = ["ContextEvents", "ContextLogged"]


class ContextLogged(Result):
    turn: int | None
    layers: int
    file: str  # relative to the workspace folder


class ContextEvents(Result):
    events: list[dict[str, Any]]  # newest first, as logged (fields beyond the known ones kept)
