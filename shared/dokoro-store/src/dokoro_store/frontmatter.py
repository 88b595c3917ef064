"""YAML front-matter of workspace markdown: split, parse leniently, render."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["parse", "render", "split"]

_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?", re.DOTALL)


def split(text: str) -> tuple[str | None, str]:
    """Return ``(front_matter_text, body)``; front matter is None when absent."""
    match = _FRONT.match(text)
    if not match:
        return None, text
    return match.group(1), text[match.end() :]


def parse(text: str) -> tuple[dict[str, Any], str]:
    """Parse front matter into a dict (empty when absent or not valid YAML) and the body."""
    raw, body = split(text)
    if raw is None:
        return {}, body
    import yaml  # lazy: only markdown readers pay for it

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError:
        return {}, body
    return (data if isinstance(data, dict) else {}), body


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    # JSON strings are valid YAML scalars and escape everything that could break the block.
    return json.dumps(str(value), ensure_ascii=False)


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _key(key: str) -> str:
    # Keys are caller data too (tags): anything but a plain identifier is quoted, so a key like
    # "area: auth" cannot break the block.
    return key if _PLAIN_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def render(data: dict[str, Any]) -> str:
    """Render a front-matter block; nested dicts become indented maps, lists YAML lists."""
    lines = ["---"]

    def emit(key: str, value: Any, indent: str) -> None:
        if isinstance(value, dict):
            lines.append(f"{indent}{_key(key)}:")
            for sub_key, sub_value in value.items():
                emit(str(sub_key), sub_value, indent + "  ")
        elif isinstance(value, list | tuple):
            if not value:
                lines.append(f"{indent}{_key(key)}: []")
            else:
                lines.append(f"{indent}{_key(key)}:")
                lines.extend(f"{indent}  - {_scalar(item)}" for item in value)
        else:
            lines.append(f"{indent}{_key(key)}: {_scalar(value)}")

    for key, value in data.items():
        emit(key, value, "")
    lines.append("---")
    return "\n".join(lines) + "\n"
