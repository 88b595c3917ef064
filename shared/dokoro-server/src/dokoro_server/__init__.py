"""dokoro's server kit: what every dokoro MCP server shares.

Servers depend on ``dokoro-store`` and this package only; no server imports another.

- :mod:`~dokoro_server.settings`: ``DokoroSettings``, the only reader of the environment;
- :mod:`~dokoro_server.app`: ``AppState`` (what a tool reaches) and the store, opened in the background;
- :mod:`~dokoro_server.lifespan`: one state per session, its observers, closing;
- :mod:`~dokoro_server.identity`: who a call acts for (``acting_agent``);
- :mod:`~dokoro_server.capture`: outcome capture and session time, off the request path;
- :mod:`~dokoro_server.registration`: ``ToolSpec`` and ``add_tools``;
- :mod:`~dokoro_server.resources`: ``ResourceSpec``/``TemplateSpec``/``PromptSpec``, ``add_resources``, ``add_prompts``;
- :mod:`~dokoro_server.results` and :mod:`~dokoro_server.notices`: what tools return;
- :mod:`~dokoro_server.server`: ``build_server`` and ``serve``;
- :mod:`~dokoro_server.entry`: what a server script does with ``--help``, ``--version`` and a terminal.

The fixtures of the servers' tests are in ``dokoro-testkit``, a development dependency only.

Names are resolved on first use (PEP 562), as in ``dokoro_store``: a command that needs only the
settings and the store (``dokoro rules``) never imports the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dokoro_server.app import AppState, StoreOpener, open_store, open_store_or_exit, state
    from dokoro_server.capture import FeedbackRecorder, SessionTimeTracker, flush_feedback
    from dokoro_server.identity import (
        OPERATOR_SCOPE,
        acting_agent,
        authenticated_agent,
        default_agent,
        over_http,
        require_operator,
    )
    from dokoro_server.notices import secret_notice
    from dokoro_server.registration import ToolSpec, add_tools
    from dokoro_server.resources import PromptSpec, ResourceSpec, TemplateSpec, add_prompts, add_resources
    from dokoro_server.results import card, result
    from dokoro_server.server import INSTRUCTIONS, VERSION, Register, build_server, serve
    from dokoro_server.settings import DokoroSettings

__all__ = [
    "INSTRUCTIONS",
    "OPERATOR_SCOPE",
    "VERSION",
    "AppState",
    "DokoroSettings",
    "FeedbackRecorder",
    "PromptSpec",
    "Register",
    "ResourceSpec",
    "SessionTimeTracker",
    "StoreOpener",
    "TemplateSpec",
    "ToolSpec",
    "acting_agent",
    "add_prompts",
    "add_resources",
    "add_tools",
    "authenticated_agent",
    "build_server",
    "card",
    "default_agent",
    "flush_feedback",
    "open_store",
    "open_store_or_exit",
    "over_http",
    "require_operator",
    "result",
    "secret_notice",
    "serve",
    "state",
]

_HOMES = {
    "AppState": "dokoro_server.app",
    "StoreOpener": "dokoro_server.app",
    "open_store": "dokoro_server.app",
    "open_store_or_exit": "dokoro_server.app",
    "state": "dokoro_server.app",
    "FeedbackRecorder": "dokoro_server.capture",
    "SessionTimeTracker": "dokoro_server.capture",
    "flush_feedback": "dokoro_server.capture",
    "acting_agent": "dokoro_server.identity",
    "authenticated_agent": "dokoro_server.identity",
    "default_agent": "dokoro_server.identity",
    "over_http": "dokoro_server.identity",
    "OPERATOR_SCOPE": "dokoro_server.identity",
    "require_operator": "dokoro_server.identity",
    "secret_notice": "dokoro_server.notices",
    "ToolSpec": "dokoro_server.registration",
    "add_tools": "dokoro_server.registration",
    "PromptSpec": "dokoro_server.resources",
    "ResourceSpec": "dokoro_server.resources",
    "TemplateSpec": "dokoro_server.resources",
    "add_prompts": "dokoro_server.resources",
    "add_resources": "dokoro_server.resources",
    "card": "dokoro_server.results",
    "result": "dokoro_server.results",
    "INSTRUCTIONS": "dokoro_server.server",
    "VERSION": "dokoro_server.server",
    "Register": "dokoro_server.server",
    "build_server": "dokoro_server.server",
    "serve": "dokoro_server.server",
    "DokoroSettings": "dokoro_server.settings",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dokoro_server' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
