"""The shared server over streamable HTTP: tokens, agents, and refusals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from dokoro.http import NO_TOKEN, WRONG_TOKEN

pytestmark = pytest.mark.anyio


async def test_a_request_without_a_token_is_refused(http_server: str) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        wrong = await http.post(
            http_server,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": "Bearer dkr_not_a_token"},
        )
    assert response.status_code == 401
    assert wrong.status_code == 401
    for answer, line in ((response, NO_TOKEN), (wrong, WRONG_TOKEN)):
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and line in challenge
        assert "resource_metadata" not in challenge  # nothing that sends a client to OAuth
        assert answer.json()["error"]["message"] == line
        assert "\n" not in line and "dokoro token create" in line


async def test_a_client_without_a_token_is_told_how_to_get_one_not_sent_into_oauth(http_server: str) -> None:
    """The SDK's plain client reports the server's one line as the error of its first request."""
    from mcp import Client, MCPError
    from mcp.client.streamable_http import streamable_http_client

    for headers, line in (({}, NO_TOKEN), ({"Authorization": "Bearer dkr_not_a_token"}, WRONG_TOKEN)):
        async with httpx2.AsyncClient(headers=headers) as http:
            with pytest.raises(BaseException) as refused:
                async with Client(streamable_http_client(http_server, http_client=http)):
                    pass
        errors = _leaves(refused.value)
        assert {str(e) for e in errors if isinstance(e, MCPError)} == {line}, errors
    root = http_server.removesuffix("/mcp")
    async with httpx2.AsyncClient() as http:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"):
            assert (await http.get(root + path)).status_code == 404


async def test_an_oauth_client_ends_on_the_token_line_without_registering(http_server: str) -> None:
    """The SDK's OAuth client finds no resource metadata and no authorization server; its
    registration attempt is answered with the line saying how to get a token."""
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider, OAuthRegistrationError
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

    class Memory:
        async def get_tokens(self) -> OAuthToken | None:
            return None

        async def set_tokens(self, tokens: OAuthToken) -> None:
            raise AssertionError("no token can come from this server")

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return None

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            raise AssertionError("no client can register with this server")

    async def redirect(url: str) -> None:
        raise AssertionError(f"sent to authorize at {url}")

    async def callback() -> tuple[str, str | None]:
        raise AssertionError("no authorization to wait for")

    provider = OAuthClientProvider(
        server_url=http_server,
        client_metadata=OAuthClientMetadata(redirect_uris=["http://127.0.0.1:1/callback"], client_name="t"),
        storage=Memory(),
        redirect_handler=redirect,
        callback_handler=callback,
    )
    async with httpx2.AsyncClient(auth=provider) as http:
        with pytest.raises(BaseException) as refused:
            async with Client(streamable_http_client(http_server, http_client=http)):
                pass
    errors = [e for e in _leaves(refused.value) if isinstance(e, OAuthRegistrationError)]
    assert len(errors) == 1 and str(errors[0]).endswith(NO_TOKEN), _leaves(refused.value)


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions an exception group holds, flattened (with their causes' chains)."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    chain = [error]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) is not None and cause not in chain:
        chain.append(cause)
    return chain


async def test_the_right_token_works_and_claims_under_its_agent(
    http_server: str, tokens: dict[str, str], connect
) -> None:
    async with connect(http_server, tokens["alice"]) as alice:
        claim = await alice.call_tool("dokoro_workspace_claim", {"task": "shared server"})
        assert not claim.is_error, claim.content
        assert claim.structured_content["agent_id"] == "alice"
        added = await alice.call_tool("dokoro_question_add", {"question": "who asked?"})
        assert not added.is_error


async def test_an_agent_cannot_act_as_another(http_server: str, tokens: dict[str, str], connect) -> None:
    async with connect(http_server, tokens["alice"]) as alice:
        assert not (await alice.call_tool("dokoro_workspace_claim", {"task": "alice's work"})).is_error
    async with connect(http_server, tokens["bob"]) as bob:
        dump = await bob.call_tool("dokoro_workspace_dump", {"reason": "not mine", "keepActive": False})
        assert dump.is_error
        assert "held by alice" in dump.content[0].text and "you are bob" in dump.content[0].text
        status = await bob.call_tool("dokoro_workspace_status", {})
        assert status.structured_content["locked_by"] == "alice"


async def test_a_remote_agent_cannot_make_the_server_read_its_disk(
    http_server: str, tokens: dict[str, str], connect
) -> None:
    async with connect(http_server, tokens["bob"]) as bob:
        copied = await bob.call_tool("dokoro_save_file", {"source": "/etc/hostname"})
        assert copied.is_error and "not accepted on the shared HTTP server" in copied.content[0].text
        image = await bob.call_tool("dokoro_save_image", {"source": "/etc/hostname"})
        assert image.is_error and "base64" in image.content[0].text
        init = await bob.call_tool("dokoro_init", {"projectPath": "/tmp"})
        assert init.is_error and "projectPath is not accepted" in init.content[0].text


@pytest.mark.parametrize("host", ["127.0.0.2", "0.0.0.0"])
def test_any_host_but_the_protected_loopback_names_needs_tokens(tmp_path: Path, host: str) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["DOKORO_PATH"] = str(tmp_path / "dokoro")
    args = ["-m", "dokoro", "serve", "--http", "--host", host, "--port", "0"]  # refused before binding
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "dokoro token create" in done.stderr


async def test_the_one_workspace_lock_of_the_team_is_said_in_the_answers(
    http_server: str, tokens: dict[str, str], connect
) -> None:
    """On the shared server one lock covers the team: the claim, the status and the refusal say so."""
    from dokoro_store.results.working import ONE_WORKSPACE

    def text(answer) -> str:
        return "\n".join(getattr(block, "text", "") for block in answer.content)

    async with connect(http_server, tokens["alice"]) as alice, connect(http_server, tokens["bob"]) as bob:
        claim = await alice.call_tool("dokoro_workspace_claim", {"task": "the release"})
        assert not claim.is_error and ONE_WORKSPACE in text(claim)
        status = await bob.call_tool("dokoro_workspace_status", {})
        assert "locked by alice" in text(status) and ONE_WORKSPACE in text(status)
        for tool, args in (("dokoro_workspace_claim", {"task": "mine"}), ("dokoro_session_log", {"entry": "x"})):
            refused = await bob.call_tool(tool, args)
            assert refused.is_error and "alice" in text(refused) and ONE_WORKSPACE in text(refused), tool
