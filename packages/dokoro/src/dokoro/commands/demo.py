"""``dokoro demo``: the Monday/Thursday story, played by a scripted agent against real servers.

Monday, a server process is started over stdio in a temporary store; the "agent" claims the
workspace, logs what it finds, leaves a question, writes a session summary and dumps the
workspace. Thursday, a *fresh* server process (nothing in memory) is asked what happened,
and the agent resumes from Monday's summary. Every call and answer is printed.

Each server runs on the story's day (the last Thursday, and the Monday before it): its clock is
the real one moved back, so the files it writes are named after the day the story says. No
session has a time-out: every call is printed as it is made, however slow the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.text import Text

__all__ = ["Call", "Session", "run_demo", "story", "story_days"]

MODEL = "claude-opus-4-7"
# Environment a server process may inherit besides the DOKORO_* the demo sets itself:
# enough to start Python (and find a non-installed checkout), never the user's own store.
_INHERITED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "PYTHONPATH")


@dataclass(frozen=True)
class Call:
    """One tool call of the story."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Session:
    """One agent session: a fresh server process and the calls the agent makes to it."""

    title: str
    prompt: str
    calls: tuple[Call, ...]


def story(monday: date) -> tuple[Session, Session]:
    """The seed README's story: Monday fixes the flaky login test, Thursday resumes it."""
    session_id = f"{monday:%Y-%m-%d}-login"
    since = monday - timedelta(days=7)
    first = Session(
        title="Monday — a fresh Claude Code session",
        prompt="You ▸ The concurrent-login test is flaky. Fix it.",
        calls=(
            Call("dokoro_workspace_claim", {"task": "Fix the flaky concurrent-login test"}),
            Call(
                "dokoro_session_log",
                {"entry": "Reproduced: two concurrent logins fail about 1 run in 5", "type": "issue"},
            ),
            Call(
                "dokoro_session_log",
                {
                    "entry": "Root cause = race in session refresh: both logins refresh the same session "
                    "and the second write wins",
                    "type": "note",
                },
            ),
            Call(
                "dokoro_session_log",
                {"entry": "Partial fix in auth/session.ts: refresh serialised per session id", "type": "progress"},
            ),
            Call(
                "dokoro_question_add",
                {
                    "question": "The login race needs a regression test",
                    "context": "the fix in auth/session.ts is partial; the flaky test alone will not catch a relapse",
                    "priority": "high",
                },
            ),
            Call(
                "dokoro_session_summary_add",
                {
                    "session_id": session_id,
                    "ai_model": MODEL,
                    "summary": "Fixed race in session refresh behind the flaky concurrent-login test; "
                    "partial fix in auth/session.ts; TODO: regression test",
                    "key_decisions": ["serialise session refresh per session id"],
                    "key_topics": ["auth", "login", "flaky test"],
                    "message_count": 42,
                },
            ),
            Call(
                "dokoro_workspace_dump",
                {"reason": "End of Monday's session", "keepActive": False, "status": "paused"},
            ),
        ),
    )
    second = Session(
        title="Thursday — a new session, a new server process, zero context",
        prompt="You ▸ Pick up the login bug from earlier this week.",
        calls=(
            Call("dokoro_workspace_status", {}),
            Call("dokoro_session_recall", {"query": "login", "since": since.isoformat()}),
            Call("dokoro_question_list", {}),
            Call("dokoro_workspace_claim", {"task": "Write the regression test for the login race"}),
            Call(
                "dokoro_session_log",
                {"entry": "Resuming from Monday's session — writing the regression test now", "type": "progress"},
            ),
            Call("dokoro_workspace_dump", {"reason": "End of Thursday's session", "keepActive": False}),
        ),
    )
    return first, second


def story_days(today: date) -> tuple[date, date]:
    """The story's Monday and Thursday: the last Thursday up to ``today``, and the Monday before it."""
    thursday = today - timedelta(days=(today.weekday() - 3) % 7)
    return thursday - timedelta(days=3), thursday


def _server_env(store: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key in _INHERITED}
    env.update(DOKORO_PATH=str(store), DOKORO_AGENT_ID="claude-code", PYTHONUNBUFFERED="1")
    return env


def _answer_text(result: Any) -> str:
    parts = [getattr(block, "text", None) or f"<{getattr(block, 'type', 'content')}>" for block in result.content]
    return "\n".join(parts).strip() or "(empty result)"


async def _play_session(
    session: Session, day: date, workdir: Path, store: Path, console: Console
) -> tuple[int, str | None]:
    """Run one session in a new server process living on ``day``: the calls that succeeded, and
    the tool that returned an error result (None when none did)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    days_back = (datetime.now(UTC).date() - day).days
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dokoro.commands.demo_server", str(days_back)],
        env=_server_env(store),
        cwd=str(workdir),
    )
    console.rule(Text(session.title, style="bold"))
    console.print(Text(session.prompt, style="italic"))
    console.print(Text(f"server: a new dokoro process on {day:%A %Y-%m-%d}, DOKORO_PATH={store}", style="dim"))
    console.print()
    done = 0
    async with Client(params) as client:
        for call in session.calls:
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            console.print(Text.assemble(("→ ", "bold cyan"), (call.tool, "bold cyan"), " ", (arguments, "cyan")))
            result = await client.call_tool(call.tool, call.arguments)
            answer = textwrap.indent(_answer_text(result), "    ") + "\n"
            console.print(Text(answer, style="red" if result.is_error else ""))
            if result.is_error:
                # Return rather than raise: an exception inside the client would reach us
                # wrapped in the transport's exception group.
                return done, call.tool
            done += 1
    return done, None


async def _play(workdir: Path, console: Console) -> tuple[int, str | None]:
    store = workdir / "dokoro"
    calls = 0
    monday, thursday = story_days(datetime.now(UTC).date())
    for session, day in zip(story(monday), (monday, thursday), strict=False):
        done, failed = await _play_session(session, day, workdir, store, console)
        calls += done
        if failed is not None:
            return calls, failed
    return calls, None


def run_demo(*, keep: bool = False, console: Console | None = None) -> bool:
    """Play the story in a temporary store; True when every call succeeded.

    The store is removed afterwards unless ``keep``.
    """
    # soft_wrap: lines are printed as they are and the terminal wraps them, so output copies cleanly.
    console = console or Console(highlight=False, soft_wrap=True)
    workdir = Path(tempfile.mkdtemp(prefix="dokoro-demo-"))
    console.print(Text("dokoro demo: the Monday/Thursday story, played against real dokoro servers over stdio", "bold"))
    try:
        calls, failed = anyio.run(_play, workdir, console)
    except BaseExceptionGroup as group:
        # Rich turns a closed stdout (``dokoro demo | head``) into SystemExit; inside the MCP
        # client it arrives wrapped. Anything else is a real failure and propagates.
        _, rest = group.split(SystemExit)
        if rest is None:
            raise SystemExit(1) from None
        raise
    finally:
        if keep:
            console.print(Text(f"Store kept at {workdir / 'dokoro'} (remove {workdir} when done).", "dim"))
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if failed is not None:
        console.print(Text(f"✗ {failed} returned an error result (after {calls} successful calls)", "bold red"))
        return False
    console.rule(Text("Done", style="bold green"))
    console.print(
        Text(
            f"✓ {calls} tool calls over two server processes, no errors. Thursday's agent resumed "
            "from Monday's summary instead of starting blank.",
            "green",
        )
    )
    return True
