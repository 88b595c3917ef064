"""dokoro's server kit: what every dokoro MCP server shares.

Servers depend on ``dokoro-store`` and this package only; no server imports another.
"""

from dokoro_server.capture import FeedbackRecorder, flush_feedback
from dokoro_server.server import INSTRUCTIONS, VERSION, Register, build_server, serve
from dokoro_server.settings import DokoroSettings
from dokoro_server.toolkit import (
    AppState,
    ToolSpec,
    acting_agent,
    add_tools,
    authenticated_agent,
    card,
    open_store,
    open_store_or_exit,
    result,
    secret_notice,
    state,
)

__all__ = [
    "INSTRUCTIONS",
    "VERSION",
    "AppState",
    "DokoroSettings",
    "FeedbackRecorder",
    "Register",
    "ToolSpec",
    "acting_agent",
    "add_tools",
    "authenticated_agent",
    "build_server",
    "card",
    "flush_feedback",
    "open_store",
    "open_store_or_exit",
    "result",
    "secret_notice",
    "serve",
    "state",
]
