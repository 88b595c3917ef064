"""Who owns what, and when one agent's call must not touch another agent's data.

An agent is known by its id: the bearer token's agent on the shared HTTP server, else
``DOKORO_AGENT_ID``. The id ``unknown`` (the setting's default) and ``None`` mean "no identity":
a stdio server nobody named, or a person at the command line. The walls stand between two
*known* agents: an anonymous caller is the person who runs the store and may do what the
reference allowed; a known agent may not destroy or take over what another known agent owns.
The full table of what an agent may do to another's data is in ``docs/team.md``.
"""

from __future__ import annotations

__all__ = ["ANONYMOUS", "known_agent", "owned_by_another"]

ANONYMOUS = "unknown"


def known_agent(agent: str | None) -> str | None:
    """``agent`` when it names somebody; None for no identity (``None``, empty, ``unknown``)."""
    if agent is None:
        return None
    agent = agent.strip()
    return None if not agent or agent == ANONYMOUS else agent


def owned_by_another(owner: str | None, actor: str | None) -> bool:
    """True when a known ``actor`` acts on data a different known agent owns."""
    owner, actor = known_agent(owner), known_agent(actor)
    return owner is not None and actor is not None and owner != actor
