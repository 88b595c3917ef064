"""Tool registration: a :class:`ToolSpec` per tool function, added with :func:`add_tools`.

The wrapper turns the store's :class:`~dokoro_store.errors.DokoroError` (and a refusal of the
file system) into an MCP error result whose message tells the agent how to fix the call, and
lets anything unexpected surface as a logged crash.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dokoro_store.errors import DokoroError
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

__all__ = ["ToolSpec", "add_tools"]

log = logging.getLogger("dokoro")


@dataclass(frozen=True)
class ToolSpec:
    """A tool function and how it behaves, for :func:`add_tools`."""

    fn: Callable[..., Any]
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DokoroError as exc:
            raise ToolError(str(exc)) from exc
        except OSError as exc:
            # The disk said no (permissions, space, a busy lock file): tell the agent what and
            # where, rather than a bare "Error executing tool".
            log.warning("dokoro: %s failed on the file system: %s", fn.__name__, exc)
            where = f" ({exc.filename})" if exc.filename else ""
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ToolError(f"file system error{where}: {reason}; check the path and permissions, then retry") from exc

    return wrapper


def add_tools(mcp: MCPServer[Any], specs: Sequence[ToolSpec]) -> None:
    """Register every spec on ``mcp`` (name = function name, description = docstring)."""
    for spec in specs:
        mcp.add_tool(
            _guarded(spec.fn),
            name=spec.fn.__name__,
            title=spec.title,
            annotations=ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=spec.destructive,
                idempotent_hint=spec.idempotent,
                open_world_hint=False,
            ),
        )
