"""``dokoro serve --http``: one shared server for a team, over streamable HTTP.

Bound to loopback it serves like stdio does. Bound anywhere else it demands a bearer token on
every request; each token belongs to one agent id, and tools refuse to let that agent act as
another. Tokens are created with ``dokoro token create`` and stored hashed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["NO_TOKEN", "WRONG_TOKEN", "StoreTokenVerifier", "TokenHint", "is_loopback", "serve_http"]

# What a client without a (valid) token is told, in the 401's body and its WWW-Authenticate line.
NO_TOKEN = (
    "dokoro: this server needs a bearer token and does not do OAuth: ask its operator for one "
    "(`dokoro token create --agent NAME` on the server's machine), then send the header "
    "`Authorization: Bearer dkr_...` (docs/team.md)"
)
WRONG_TOKEN = (
    "dokoro: this bearer token is not valid here (unknown or revoked): ask the server's operator for a new "
    "one (`dokoro token create --agent NAME`; `dokoro token list` shows the live ones) (docs/team.md)"
)
# Where an OAuth client looks for an authorization server; dokoro has none, and says so there too.
_OAUTH_PATHS = ("/.well-known/oauth-", "/.well-known/openid-configuration", "/register", "/authorize", "/token")


# The hosts the SDK protects against DNS rebinding by itself; only these may serve without tokens.
_PROTECTED_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """True only for the loopback names served without tokens (other 127.x addresses need them)."""
    return host.strip("[]") in _PROTECTED_LOOPBACK


class StoreTokenVerifier:
    """Bearer tokens checked against the store's hashed ``api_tokens``."""

    def __init__(self, store: Any) -> None:
        self._store = store

    async def verify_token(self, token: str) -> Any:
        import anyio
        from dokoro_server import OPERATOR_SCOPE
        from mcp.server.auth.provider import AccessToken

        found = await anyio.to_thread.run_sync(self._store.tokens.identity, token)
        if found is None:
            return None
        scopes = ["dokoro", OPERATOR_SCOPE] if found.operator else ["dokoro"]
        return AccessToken(token=token, client_id=found.agent_id, scopes=scopes)


class TokenHint:
    """ASGI wrapper of the token-guarded app: a 401 says in one line how to get a token, and
    nothing points the client at OAuth.

    An MCP client starts OAuth from a 401 (the SDK's ``OAuthClientProvider`` discovers protected
    resource metadata, then an authorization server, then registers itself dynamically). The
    server publishes no resource metadata (``resource_server_url=None``), its ``WWW-Authenticate``
    carries no ``resource_metadata``, and every OAuth discovery or registration path answers 404
    with the same line, so an OAuth client's error ends with it. The 401's body is a JSON-RPC
    error, which the SDK's plain client reports as the call's error.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path.startswith(_OAUTH_PATHS):
            await _answer(send, 404, NO_TOKEN.encode(), "text/plain; charset=utf-8")
            return
        has_token = any(
            name.lower() == b"authorization" and value.lower().startswith(b"bearer ")
            for name, value in scope.get("headers", [])
        )
        hint = WRONG_TOKEN if has_token else NO_TOKEN
        refused = False

        async def hinting(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
                error = {"code": -32001, "message": hint}
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
                await _answer(send, 401, body, "application/json", www_authenticate=hint)
            elif not refused:
                await send(message)

        await self._app(scope, receive, hinting)


async def _answer(send: Send, status: int, body: bytes, content_type: str, *, www_authenticate: str = "") -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    if www_authenticate:
        challenge = f'Bearer realm="dokoro", error="invalid_token", error_description="{www_authenticate}"'
        headers.append((b"www-authenticate", challenge.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_http(path: Path | None, host: str, port: int, require_token: bool) -> None:
    from mcp.server.auth.settings import AuthSettings

    from dokoro.commands._open import open_for_command, settings_for
    from dokoro.server import create_unified_server

    settings = settings_for(path)
    store = open_for_command(path, create=True)
    try:
        auth_on = require_token or not is_loopback(host)
        verifier: StoreTokenVerifier | None = None
        auth: AuthSettings | None = None
        if auth_on:
            if not store.tokens.any_live():
                print(
                    f"dokoro: serving on {host} needs bearer tokens and this store has none; create one per agent "
                    "with `dokoro token create --agent NAME`, then start again.",
                    file=sys.stderr,
                )
                raise SystemExit(2)
            url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
            verifier = StoreTokenVerifier(store)
            # No resource server URL: no protected resource metadata, nothing that sends a client to OAuth.
            auth = AuthSettings(issuer_url=url, resource_server_url=None)
        mcp = create_unified_server(settings, store=store, token_verifier=verifier, auth=auth)
        from dokoro_server import heap

        heap.install()  # the process's long-lived heap kept out of the collector's full walks
        heap.store_opened(store)
        mode = "bearer tokens required" if auth_on else "loopback only, no tokens"
        print(f"dokoro: serving every tool on http://{host}:{port}/mcp ({mode})", file=sys.stderr)
        import anyio
        import uvicorn

        app: ASGIApp = mcp.streamable_http_app(host=host)
        if auth_on:
            app = TokenHint(app)
        config = uvicorn.Config(app, host=host, port=port, log_level=mcp.settings.log_level.lower())
        anyio.run(uvicorn.Server(config).serve)
    finally:
        store.close()
