"""The store opens in the background once the client has the tool list; a tool call waits for it,
and a store that cannot be opened answers every call with the reason."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from dokoro_server import DokoroSettings, StoreOpener, build_server
from mcp import Client

pytestmark = pytest.mark.anyio


async def test_the_tools_are_listed_before_the_store_is_opened(tmp_path: Path, registers) -> None:
    settings = DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False)
    opener = StoreOpener.for_settings(settings, tmp_path)
    mcp = build_server(settings, name="kit", cwd=tmp_path, store=opener)
    for register in registers:
        register(mcp)
    try:
        async with Client(mcp) as client:
            assert not opener.started
            assert not (tmp_path / "dokoro").exists()

            names = {tool.name for tool in (await client.list_tools()).tools}

            assert names == {"kit_claim", "kit_tool_calls", "kit_echo"}
            assert opener.started  # right after the list was answered
            echoed = await client.call_tool("kit_echo", {"text": "hi"})
            claimed = await client.call_tool("kit_claim", {"task": "fix login"})
        assert not echoed.is_error and not claimed.is_error
        assert opener.ready
        assert (tmp_path / "dokoro" / "current.md").exists()
    finally:
        opener.close()


async def test_a_first_tool_call_opens_the_store_when_nothing_was_listed(make_client, root) -> None:
    async with make_client() as client:
        claimed = await client.call_tool("kit_claim", {"task": "fix login"})
    assert not claimed.is_error, claimed.content
    assert (root / "current.md").exists()


async def test_an_unreachable_database_answers_every_tool_call_with_where_and_the_fix(
    tmp_path: Path, registers, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql+psycopg://x@127.0.0.1:1/db"
    settings = DokoroSettings(path=tmp_path / "dokoro", database_url=url, auto_feedback=False)
    mcp = build_server(settings, name="kit", cwd=tmp_path)
    for register in registers:
        register(mcp)
    async with Client(mcp) as client:
        await client.list_tools()
        first = await client.call_tool("kit_claim", {"task": "fix login"})
        second = await client.call_tool("kit_echo", {"text": "hi"})

    for outcome in (first, second):
        assert outcome.is_error
        text = outcome.content[0].text
        assert "127.0.0.1:1" in text and "DOKORO_DATABASE_URL" in text
        assert "Traceback" not in text
    assert not (tmp_path / "dokoro" / ".dokoro" / "db" / "dokoro.sqlite").exists()  # no local fall-back
    stderr = capsys.readouterr().err
    assert stderr.count("dokoro: cannot reach the team database") == 1  # reported once, when it failed


async def test_an_unexpected_failure_while_opening_is_logged_and_named_in_every_answer(
    tmp_path: Path, registers, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> object:
        raise RuntimeError("disk on fire")

    settings = DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False)
    opener = StoreOpener(broken)  # type: ignore[arg-type]
    mcp = build_server(settings, name="kit", cwd=tmp_path, store=opener)
    for register in registers:
        register(mcp)
    caplog.set_level(logging.ERROR, logger="dokoro")
    async with Client(mcp) as client:
        outcome = await client.call_tool("kit_echo", {"text": "hi"})
    opener.close()

    assert outcome.is_error
    assert "could not open its store (RuntimeError: disk on fire)" in outcome.content[0].text
    assert opener.failed
    assert "could not open the store" in caplog.text and "disk on fire" in caplog.text


def test_an_opener_given_an_open_store_never_closes_it(tmp_path: Path) -> None:
    from dokoro_store import Store

    with Store.open(tmp_path / "dokoro") as store:
        opener = StoreOpener.opened(store)
        assert opener.ready and opener.store() is store
        opener.close()
        assert store.working.workspace is not None
        assert opener.store() is store


def test_the_heap_is_frozen_once_the_store_is_open(tmp_path: Path) -> None:
    # A fresh process (its freeze count starts at 0): the opener freezes the heap it opened with.
    import subprocess
    import sys
    import textwrap

    code = f"""
        import gc
        from pathlib import Path
        from dokoro_server import DokoroSettings, StoreOpener
        from dokoro_server.heap import install, settled
        install()  # what a server's entry point does
        settings = DokoroSettings(path=Path({str(tmp_path / "dokoro")!r}))
        opener = StoreOpener.for_settings(settings, Path({str(tmp_path)!r}))
        before = (settled("store-open"), gc.get_freeze_count())
        opener.store()
        print(before[0], before[1], settled("store-open"), gc.get_freeze_count() > 50_000)
        opener.close()
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "0", "True", "True"]
