"""The client's hook events: which ``dokoro hook`` command answers which event, and its payload.

Claude Code (hooks reference at code.claude.com/docs/en/hooks, checked December 2026 against
Claude Code 2.1) hands every hook a JSON object on stdin: ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``, and each event's own field: ``source`` for SessionStart (startup,
resume, clear, compact), ``prompt`` for UserPromptSubmit, ``trigger`` for PreCompact (manual,
auto), ``reason`` for SessionEnd (clear, logout, prompt_input_exit, other), ``stop_hook_active``
for Stop. Fields this reader does not know are ignored; a missing one is None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["CAPTURE_EVENTS", "CLIENT_EVENTS", "EVENTS", "MAX_EVENT_BYTES", "HookEvent", "parse_event"]

# dokoro's command name -> the Claude Code event it answers.
CLIENT_EVENTS = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
EVENTS = tuple(CLIENT_EVENTS)
CAPTURE_EVENTS = frozenset({"pre-compact", "stop", "session-end"})
MAX_EVENT_BYTES = 8 * 1024 * 1024  # a pasted prompt can be long; an event larger than this is not read


@dataclass(frozen=True)
class HookEvent:
    session_id: str | None
    transcript_path: str | None
    cwd: str | None
    hook_event_name: str | None
    source: str | None = None
    prompt: str | None = None
    trigger: str | None = None
    reason: str | None = None


def _text(data: dict[str, Any], key: str, limit: int = 4096) -> str | None:
    value = data.get(key)
    if isinstance(value, str) and value and len(value) <= limit:
        return value
    return None


def parse_event(raw: bytes) -> HookEvent:
    """The event in ``raw`` (the client's stdin); raises ValueError when it is not a JSON object."""
    if len(raw) > MAX_EVENT_BYTES:
        raise ValueError(f"the event is over {MAX_EVENT_BYTES // (1024 * 1024)} MiB; not read")
    data = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("the event is not a JSON object")
    prompt = data.get("prompt")
    return HookEvent(
        session_id=_text(data, "session_id", 200),
        transcript_path=_text(data, "transcript_path"),
        cwd=_text(data, "cwd"),
        hook_event_name=_text(data, "hook_event_name", 100),
        source=_text(data, "source", 100),
        prompt=prompt if isinstance(prompt, str) else None,
        trigger=_text(data, "trigger", 100),
        reason=_text(data, "reason", 100),
    )
