"""dokoro's entries in Claude Code's settings file (``.claude/settings.json``), merged in and out.

The file is the person's: every entry that is not dokoro's is kept as it is, in its place; only
dokoro's own (a ``command`` hook running ``dokoro hook <event>``, whatever path or launcher
precedes it) are added, refreshed or removed. The shape (Claude Code's hooks reference)::

    {"hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [{"type": "command",
                                      "command": "dokoro hook prompt", "timeout": 10}]}], ...}}

A file that is not a JSON object, is larger than 1 MiB, or is a symbolic link is left alone with
the reason: rewriting it could lose what the person wrote.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dokoro.commands.hooks.events import CLIENT_EVENTS

__all__ = [
    "CLIENT_TIMEOUT",
    "SettingsChange",
    "SettingsError",
    "installed_events",
    "is_dokoro_command",
    "plan_install",
    "plan_uninstall",
    "read_settings",
    "write_settings",
]

# The client's own time-out (seconds) of each hook: longer than dokoro's (hooks/run.py), so
# dokoro always answers (or says nothing) first.
CLIENT_TIMEOUT = {"session-start": 15, "prompt": 10, "pre-compact": 120, "stop": 120, "session-end": 120}
_MAX_BYTES = 1024 * 1024
_DOKORO = re.compile(r"(?:^|[\s/\\'\"])dokoro(?:\.exe)?['\"]?\s+hook\s+(" + "|".join(CLIENT_EVENTS) + r")\b")


class SettingsError(ValueError):
    """A settings file dokoro will not rewrite; the message says why and what to do."""


@dataclass(frozen=True)
class SettingsChange:
    path: Path
    before: dict[str, Any]
    after: dict[str, Any]

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = _dump(self.before).splitlines(keepends=True) if self.before else []
        new = _dump(self.after).splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"{self.path} (now)", f"{self.path} (after)"))


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def is_dokoro_command(command: object) -> str | None:
    """The event of a ``dokoro hook <event>`` command line, or None for anything else."""
    if not isinstance(command, str):
        return None
    match = _DOKORO.search(command)
    return match.group(1) if match else None


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in ``path`` ({} when there is no file); SettingsError when dokoro must not touch it."""
    if path.is_symlink():
        raise SettingsError(f"{path} is a symbolic link; dokoro does not write through one: edit its target by hand")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > _MAX_BYTES:
        raise SettingsError(f"{path} is over 1 MiB; not a settings file dokoro rewrites")
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _hooks_of(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{path}: "hooks" is not an object; fix it first, nothing was changed')
    return hooks


def installed_events(data: dict[str, Any]) -> dict[str, str]:
    """dokoro's hooks in ``data``: its event name -> the command line found."""
    found: dict[str, str] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                command = hook.get("command") if isinstance(hook, dict) else None
                if (event := is_dokoro_command(command)) is not None:
                    found[event] = str(command)
    return found


def plan_install(
    path: Path, launcher: str, events: tuple[str, ...] = tuple(CLIENT_EVENTS), *, options: str = ""
) -> SettingsChange:
    """The settings with dokoro's hooks (``<launcher> hook <event> <options>``) added or refreshed."""
    before = read_settings(path)
    after = copy.deepcopy(before)
    hooks = _hooks_of(after, path)
    for event in events:
        client = CLIENT_EVENTS[event]
        entry = {
            "type": "command",
            "command": f"{launcher} hook {event}{' ' + options if options else ''}",
            "timeout": CLIENT_TIMEOUT[event],
        }
        groups = hooks.setdefault(client, [])
        if not isinstance(groups, list):
            raise SettingsError(f'{path}: hooks["{client}"] is not a list; fix it first, nothing was changed')
        placed = False
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            refreshed: list[Any] = []
            for hook in inner:
                if isinstance(hook, dict) and is_dokoro_command(hook.get("command")) == event:
                    if placed:
                        continue  # a second copy of dokoro's entry: one is enough
                    hook, placed = {**hook, **entry}, True
                refreshed.append(hook)
            inner[:] = refreshed
        if not placed:
            groups.append({"matcher": "", "hooks": [entry]})
    return SettingsChange(path, before, after)


def plan_uninstall(path: Path) -> SettingsChange:
    """The settings without dokoro's hooks (a group, event or ``hooks`` left empty goes too)."""
    before = read_settings(path)
    after = copy.deepcopy(before)
    hooks = after.get("hooks")
    if not isinstance(hooks, dict):
        return SettingsChange(path, before, after)
    for client in list(hooks):
        groups = hooks[client]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not (isinstance(h, dict) and is_dokoro_command(h.get("command")))]
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[client] = kept_groups
        else:
            del hooks[client]
    if not hooks:
        del after["hooks"]
    return SettingsChange(path, before, after)


def write_settings(change: SettingsChange) -> None:
    """Write the change atomically (a temporary file renamed over the old one, its mode kept)."""
    path = change.path
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        raise SettingsError(f"{path} is a symbolic link; dokoro does not write through one")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, path.stat().st_mode & 0o777)
        except FileNotFoundError:
            os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_dump(change.after))
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
