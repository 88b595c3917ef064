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

from typing import TYPE_CHECKING

from dokoro_store import lazy_exports

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
    "AppState": "app",
    "StoreOpener": "app",
    "open_store": "app",
    "open_store_or_exit": "app",
    "state": "app",
    "FeedbackRecorder": "capture",
    "SessionTimeTracker": "capture",
    "flush_feedback": "capture",
    "acting_agent": "identity",
    "authenticated_agent": "identity",
    "default_agent": "identity",
    "over_http": "identity",
    "OPERATOR_SCOPE": "identity",
    "require_operator": "identity",
    "secret_notice": "notices",
    "ToolSpec": "registration",
    "add_tools": "registration",
    "PromptSpec": "resources",
    "ResourceSpec": "resources",
    "TemplateSpec": "resources",
    "add_prompts": "resources",
    "add_resources": "resources",
    "card": "results",
    "result": "results",
    "INSTRUCTIONS": "server",
    "VERSION": "server",
    "Register": "server",
    "build_server": "server",
    "serve": "server",
    "DokoroSettings": "settings",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
