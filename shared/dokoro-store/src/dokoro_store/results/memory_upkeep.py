"""Results of the memories' upkeep: the review list (stale and proposed memories), a renewal,
the per-type switches and the use of each type."""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import Result
from dokoro_store.results.memories import Memory, TypeUsage

__all__ = ["MemoryReviewList", "Renewed", "StaleEntry", "TypeSwitches", "TypeUsage"]


class StaleEntry(Result):
    """A stale memory and why (past a date, or a dependency retired)."""

    memory: Memory
    stale: str = Field(description="Why it is stale, in words starting with 'stale'.")


class MemoryReviewList(Result):
    """What waits for upkeep: stale memories (renew or retire them) and proposed ones (approve or reject)."""

    health: str | None = Field(description="The one actionable line; null when all is well.")
    stale_total: int
    stale: list[StaleEntry]
    pending: list[Memory] = Field(description="Memories proposed by agents, waiting for a person's review.")
    proposals: dict[str, int] = Field(description="Open upkeep proposals by kind (merge, summarise, prune, ...).")


class Renewed(Result):
    """A memory after its renewal (dates pushed forward, dependencies checked) or its retirement."""

    memory: Memory
    action: str = Field(description="renewed | retired")
    stale: str | None = Field(default=None, description="Set when the memory is still stale after the call: why.")
    dependents_flagged: list[str] = Field(
        default_factory=list, description="Memories depending on a retired one: now stale until renewed."
    )


class TypeSwitches(Result):
    """Each memory type's switches: whether agents may write it, and whether it waits for review."""

    agents_write: dict[str, bool]
    needs_review: dict[str, bool]
