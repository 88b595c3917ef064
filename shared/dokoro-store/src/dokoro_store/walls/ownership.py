"""Who owns what, and when one agent's call must not touch another agent's data.

An agent is known by its id: the bearer token's agent on the shared HTTP server, else
``DOKORO_AGENT_ID``. The id ``unknown`` (the setting's default) and ``None`` mean "no identity":
a stdio server nobody named, or a person at the command line. The walls stand between two
*known* agents: an anonymous caller is the person who runs the store and may do what the
reference allowed; a known agent may not destroy or take over what another known agent owns.
The full table of what an agent may do to another's data is in ``docs/team.md``.

**A memory's owner** (:func:`memory_owner`) is the known agent that wrote it; a memory that names no
agent and that a person vouches for (``user-stated``: written at the command line, in the memory
files, or stated by the user to an agent without a name) is :data:`PERSON`'s; one that names no
agent and that nobody vouches for (an anonymous agent's inference, an import) is nobody's. A known
agent may retire, supersede, renew or decide upkeep only on its own memories and on nobody's
(:func:`memory_keeper`); another's or a person's are refused, with who owns them, or wait for a
person's review.
"""

from __future__ import annotations

__all__ = ["ANONYMOUS", "PERSON", "known_agent", "memory_keeper", "memory_owner", "owned_by_another"]

ANONYMOUS = "unknown"
# The owner of a memory a person vouches for and no agent wrote (never a valid agent id: it has a space).
PERSON = "a person"
_VOUCHED = "user-stated"


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


def memory_owner(agent_id: str | None, trust: str | None) -> str | None:
    """Who a memory belongs to: the known agent that wrote it, :data:`PERSON` for one no agent wrote
    that a person vouches for (trust ``user-stated``), None for one nobody owns."""
    if (agent := known_agent(agent_id)) is not None:
        return agent
    return PERSON if trust == _VOUCHED else None


def memory_keeper(agent_id: str | None, trust: str | None, actor: str | None) -> str | None:
    """The owner that keeps ``actor`` off a memory written by ``agent_id`` with ``trust`` (None:
    ``actor`` may change it). A caller without identity (a person: the CLI, the TUI) may change any;
    a known agent its own memories and the ones nobody owns."""
    actor = known_agent(actor)
    owner = memory_owner(agent_id, trust)
    if actor is None or owner is None or owner == actor:
        return None
    return owner
