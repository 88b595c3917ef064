"""What a tool returns: text the agent reads plus the same facts as structured content, and the
reference's status cards."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

__all__ = ["card", "result"]


def result(text: str, data: BaseModel | None = None) -> CallToolResult:
    """A tool result: text the agent reads, plus the same facts as structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data.model_dump(mode="json") if data is not None else None,
    )


def card(title: str, message: str = "", details: dict[str, Any] | None = None, status: str = "success") -> str:
    """Plain-markdown rendering of the reference's status cards."""
    icon = {"success": "✅", "error": "❌", "warning": "⚠️", "info": "ℹ️"}.get(status, "•")
    lines = [f"### {icon} {title}"]
    if message:
        lines += ["", message]
    if details:
        lines.append("")
        lines += [f"- **{key}:** {value}" for key, value in details.items() if value is not None]
    return "\n".join(lines)
