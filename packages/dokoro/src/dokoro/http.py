"""``dokoro serve --http``: one shared server for a team, over streamable HTTP.

Bound to loopback it serves like stdio does. Bound anywhere else it demands a bearer token on
every request; each token belongs to one agent id, and tools refuse to let that agent act as
another. Tokens are created with ``dokoro token create`` and stored hashed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["StoreTokenVerifier", "is_loopback", "serve_http"]


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
        from mcp.server.auth.provider import AccessToken

        agent_id = await anyio.to_thread.run_sync(self._store.tokens.verify, token)
        if agent_id is None:
            return None
        return AccessToken(token=token, client_id=agent_id, scopes=["dokoro"])


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
            auth = AuthSettings(issuer_url=url, resource_server_url=f"{url}/mcp", validate_token_resource=False)
        mcp = create_unified_server(settings, store=store, token_verifier=verifier, auth=auth)
        from dokoro_server import heap

        heap.install()  # the process's long-lived heap kept out of the collector's full walks
        heap.store_opened()
        mode = "bearer tokens required" if auth_on else "loopback only, no tokens"
        print(f"dokoro: serving every tool on http://{host}:{port}/mcp ({mode})", file=sys.stderr)
        mcp.run("streamable-http", host=host, port=port)
    finally:
        store.close()
