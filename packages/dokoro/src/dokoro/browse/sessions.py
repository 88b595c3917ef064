"""Captured sessions in ``dokoro browse``: the sessions Claude Code's hooks (or ``dokoro import
transcripts``) read into the store, newest first; a session's preview is its summary and its turns.
``dokoro forget --session ID`` removes one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro.browse.items import Item, _stamp

if TYPE_CHECKING:
    from dokoro_store import Store

__all__ = ["SESSIONS_SHOWN", "session_card", "session_items"]

SESSIONS_SHOWN = 200
TURNS_SHOWN = 60
_TURN_CHARS = 600


def session_items(store: Store) -> list[Item]:
    items = []
    for session in store.capture.sessions(limit=SESSIONS_SHOWN):
        where = f" · {session.project}" if session.project else ""
        items.append(
            Item(
                id=f"session:{session.session_id}",
                label=session.title,
                sublabel=f"{_stamp(session.last_at or session.updated_at)} · {session.turns} turn(s)"
                f" · {session.tools} tool call(s){where}",
                kind="session",
                ref=session.session_id,
            )
        )
    return items


def session_card(store: Store, session_id: str) -> str:
    """The session's summary, then its turns in order (each cut short)."""
    found = store.capture.session(session_id)
    if found is None:
        return f"Session {session_id} is no longer captured (forgotten?)."
    lines = [
        f"# {found.title}",
        "",
        f"- **Session:** {found.session_id}",
        f"- **Project:** {found.project or '-'}",
        f"- **From:** {_stamp(found.first_at)} **to** {_stamp(found.last_at)}",
        f"- **Turns:** {found.turns} · **tool calls:** {found.tools} · **lines skipped:** {found.skipped}",
        f"- **Forget it:** `dokoro forget --session {found.session_id}`",
    ]
    if found.summary:
        first, *rest = found.summary.splitlines()
        lines += ["", "## Summary", "", first, "", *(f"- {line}" for line in rest if line.strip())]
    turns = store.capture.turns_of(session_id, limit=TURNS_SHOWN)
    lines += ["", "## Turns", ""]
    for _doc_id, title, text in turns:
        body = text if len(text) <= _TURN_CHARS else text[: _TURN_CHARS - 1] + "…"
        lines += [f"### {title}", "", body, ""]
    if found.turns > len(turns):
        lines.append(f"_…and {found.turns - len(turns)} more turn(s)._")
    return "\n".join(lines)
