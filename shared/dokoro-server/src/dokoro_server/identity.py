"""Who a tool call acts for: the authenticated agent of the shared HTTP server, else the
agent the call names, else the server's ``DOKORO_AGENT_ID``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from dokoro_server.app import AppState, state

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

    from dokoro_server.app import AppState

__all__ = [
    "OPERATOR_SCOPE",
    "acting_agent",
    "authenticated_agent",
    "default_agent",
    "operator_call",
    "over_http",
    "require_operator",
]

# The scope of an operator's token (``dokoro token create --operator``): whole-store actions.
OPERATOR_SCOPE = "operator"


def authenticated_agent() -> str | None:
    """The agent id of the bearer token of this request (shared HTTP server), if any."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return token.client_id if token is not None else None


def acting_agent(ctx: Context[AppState], claimed: str | None = None) -> str:
    """Who this call acts for: the authenticated agent, which may not claim to be another.

    Without authentication (stdio, loopback HTTP) it is ``claimed`` or ``DOKORO_AGENT_ID``.
    """
    authenticated = authenticated_agent()
    if authenticated is not None:
        if claimed and claimed != authenticated:
            raise ToolError(
                f"you are authenticated as {authenticated!r} and cannot act as {claimed!r}; "
                "omit agent_id or pass your own"
            )
        return authenticated
    return claimed or state(ctx).settings.agent_id


def over_http(ctx: Context[AppState]) -> bool:
    """True when this call came over HTTP (the shared server, or loopback), not stdio or in memory."""
    if authenticated_agent() is not None:
        return True
    try:
        return ctx.request_context.request is not None
    except ValueError:  # outside a request (the SDK raises ValueError): not an HTTP call
        return False


def default_agent(app: AppState) -> str:
    """Who a request that names no agent acts for: the authenticated agent, else ``DOKORO_AGENT_ID``."""
    return authenticated_agent() or app.settings.agent_id


def operator_call() -> bool:
    """True when this call may run the whole-store actions (a full reindex): an operator's token on
    the shared HTTP server, or no token at all (stdio, loopback HTTP: the person who runs it)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return token is None or OPERATOR_SCOPE in token.scopes


def require_operator(doing: str, instead: str) -> None:
    """Refuse (a tool error, nothing done) ``doing`` to an agent's token on the shared HTTP server;
    ``instead`` says how the operator runs it."""
    if not operator_call():
        raise ToolError(
            f"{doing} is the operator's on the shared server, and your token ({authenticated_agent()}) is an "
            f"agent's: nothing was done. Ask the server's operator: {instead}, on the server's machine, or "
            "over HTTP with an operator token (`dokoro token create --agent NAME --operator`)"
        )
