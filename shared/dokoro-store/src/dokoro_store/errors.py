"""Every error the store raises on purpose. Messages tell the caller how to fix the call."""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "DokoroError",
    "EmbedderMismatchError",
    "EmbedderUnavailableError",
    "InvalidArgumentError",
    "NoWorkspaceError",
    "NotFoundError",
    "NotOwnerError",
    "OutsideStoreError",
    "StoreUnavailableError",
    "WorkspaceLockedError",
]


class DokoroError(Exception):
    """Base class: an anticipated failure whose message is safe to show an agent."""


class InvalidArgumentError(DokoroError, ValueError):
    """An argument is malformed or out of range."""


class NotFoundError(DokoroError, LookupError):
    """A referenced id, file or record does not exist."""


class ConflictError(DokoroError):
    """The write would clash with a concurrent or existing one."""


class NotOwnerError(ConflictError):
    """The call would destroy or take over data another agent owns (see docs/team.md)."""


class OutsideStoreError(InvalidArgumentError):
    """A path (or the target of a symlink on it) leaves the folder it must stay in."""


class WorkspaceLockedError(ConflictError):
    """Another agent holds the workspace lock."""


class NoWorkspaceError(DokoroError):
    """The working memory needs a claimed workspace (or an initialised folder) first."""


class StoreUnavailableError(DokoroError):
    """The database cannot be opened or reached."""


class NoStoreError(StoreUnavailableError):
    """The database is reachable but holds no dokoro store, and the caller may not create one."""


class EmbedderUnavailableError(DokoroError):
    """The configured embedder cannot embed right now (library missing, server unreachable)."""


class EmbedderMismatchError(DokoroError):
    """Stored vectors were made by another embedder than the one this process uses."""
