"""The shared server over streamable HTTP: tokens, agents, and refusals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

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
