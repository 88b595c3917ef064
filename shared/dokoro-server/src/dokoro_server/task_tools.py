"""``dokoro_task_track`` and ``dokoro_task_list``: one implementation, served by two servers.

The reference serves the task timers from both the tracking and the analytics server. Servers may
not import each other, so the two tools live here, in the kit both depend on; each server's
``register`` calls :func:`register`, which adds them once per MCP server whatever the number of
callers (the unified server registers both packages).
"""

from __future__ import annotations

import weakref
from typing import Annotated, Any, Literal

from dokoro_store.results.tracking import TaskList, TaskTracked, TaskView
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from dokoro_server.app import AppState, state
from dokoro_server.bounds import Key, Note, Title
from dokoro_server.identity import acting_agent
from dokoro_server.notices import secret_notice
from dokoro_server.registration import ToolSpec, add_tools
from dokoro_server.results import card, result

__all__ = ["TASK_TOOL_NAMES", "TOOLS", "register"]

# The servers that already have the task tools.
_REGISTERED: weakref.WeakSet[MCPServer[Any]] = weakref.WeakSet()


def _minutes(seconds: float) -> str:
    from dokoro_store import format_duration

    return format_duration(round(seconds / 60))


def _line(task: TaskView) -> str:
    if task.status == "active":
        so_far = _minutes(task.active_seconds)
        return f"- 🟢 **{task.title}** (`{task.id}`) — {so_far} so far, iteration {task.iterations}"
    if task.status == "paused":
        reason = task.pauses[-1].reason if task.pauses else "paused"
        return f"- ⏸️ **{task.title}** (`{task.id}`) — {_minutes(task.active_seconds)} active, paused ({reason})"
    pauses = f", paused {_minutes(task.pause_seconds)}" if task.pause_seconds else ""
    return (
        f"- {'✅' if task.status == 'completed' else '🗑️'} **{task.title}** (`{task.id}`) — "
        f"{_minutes(task.active_seconds)} active{pauses}, {task.iterations} iteration(s)"
    )


def dokoro_task_track(
    ctx: Context[AppState],
    action: Annotated[
        Literal["start", "pause", "resume", "iterate", "complete", "abandon"],
        Field(
            description="start a task (pauses your running one), pause it, resume your first paused task, count "
            "another iteration, complete it, or abandon it."
        ),
    ],
    title: Annotated[Title | None, Field(description="What the task is (required for start).")] = None,
    reason: Annotated[Note | None, Field(description="Why you pause (stored with the pause).")] = None,
    task_id: Annotated[
        Key | None, Field(description="Act on this task of yours instead of the running (or first paused) one.")
    ] = None,
) -> Annotated[CallToolResult, TaskTracked]:
    """Track time on a task: start, pause, resume, iterate, complete or abandon. Timers are yours
    alone (per agent), measured on the database clock; pauses are counted, never as active time."""
    agent = acting_agent(ctx)
    done = state(ctx).store.tracking.track_task(action, agent, title=title, reason=reason, task_id=task_id)
    task = done.task
    titles = {
        "start": "Task Started",
        "pause": "Task Paused",
        "resume": "Task Resumed",
        "iterate": "Iteration Counted",
        "complete": "Task Completed",
        "abandon": "Task Abandoned",
    }
    details: dict[str, Any] = {
        "Task": f"{task.title} (`{task.id}`)",
        "Agent": task.agent_id,
        "Active": _minutes(task.active_seconds),
        "Paused": _minutes(task.pause_seconds) if task.pause_seconds or task.status == "paused" else None,
        "Iterations": task.iterations,
    }
    if done.auto_paused is not None:
        details["Paused for this"] = f"{done.auto_paused.title} (`{done.auto_paused.id}`)"
    text = card(titles[action], "", details)
    notice = secret_notice(done.redacted)
    return result(f"{text}\n\n{notice}" if notice else text, done)


def dokoro_task_list(ctx: Context[AppState]) -> Annotated[CallToolResult, TaskList]:
    """Your tasks, grouped: active (time so far), paused, completed (duration, iterations), abandoned."""
    done = state(ctx).store.tracking.list_tasks(acting_agent(ctx))
    lines = [f"## ⏱️ Tasks of {done.agent_id}"]
    for heading, tasks in (
        ("Active", done.active),
        ("Paused", done.paused),
        ("Completed", done.completed),
        ("Abandoned", done.abandoned),
    ):
        if tasks:
            lines += ["", f"### {heading} ({len(tasks)})", *(_line(t) for t in tasks)]
    if len(lines) == 1:
        lines += ["", "No tasks yet. Start one with dokoro_task_track action='start' and a title."]
    else:
        lines += ["", f"**Total active time:** {_minutes(done.total_active_seconds)}"]
    return result("\n".join(lines), done)


TOOLS = [
    ToolSpec(dokoro_task_track, "Track time on a task"),
    ToolSpec(dokoro_task_list, "List your tasks and their time", read_only=True, idempotent=True),
]
TASK_TOOL_NAMES = frozenset(spec.fn.__name__ for spec in TOOLS)


def register(mcp: MCPServer[Any]) -> None:
    """Add the task tools to ``mcp`` unless an earlier caller already did."""
    if mcp in _REGISTERED:
        return
    add_tools(mcp, TOOLS)
    _REGISTERED.add(mcp)
