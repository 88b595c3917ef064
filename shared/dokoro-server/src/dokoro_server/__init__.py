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
- :mod:`~dokoro_server.server`: ``build_server`` and ``serve``.

The fixtures of the servers' tests are in ``dokoro-testkit``, a development dependency only.
"""

from dokoro_server.app import AppState, StoreOpener, open_store, open_store_or_exit, state
from dokoro_server.capture import FeedbackRecorder, SessionTimeTracker, flush_feedback
from dokoro_server.identity import acting_agent, authenticated_agent, default_agent, over_http
from dokoro_server.notices import secret_notice
from dokoro_server.registration import ToolSpec, add_tools
from dokoro_server.resources import PromptSpec, ResourceSpec, TemplateSpec, add_prompts, add_resources
from dokoro_server.results import card, result
from dokoro_server.server import INSTRUCTIONS, VERSION, Register, build_server, serve
from dokoro_server.settings import DokoroSettings

__all__ = [
    "INSTRUCTIONS",
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
    "result",
    "secret_notice",
    "serve",
    "state",
]
