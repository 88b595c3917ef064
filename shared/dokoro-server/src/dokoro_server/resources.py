"""MCP resources and prompts: what a client can attach to a conversation or offer in a menu.

A server package declares them next to its tools and adds them in its ``register``, so the
unified server serves each once. Their functions call the same store services as the tools and
render the same text.

- :class:`ResourceSpec` (a fixed URI, ``dokoro://current``): the function takes the session's
  :class:`~dokoro_server.app.AppState`. The SDK gives a fixed-URI resource no request context, so
  the store middleware keeps the request's state in a context variable (:func:`current_app`).
- :class:`TemplateSpec` (``dokoro://plans/{id}``) and :class:`PromptSpec`: the function takes the
  request's ``Context`` (``state(ctx)``, as a tool does) and the URI's variables or the prompt's
  arguments.

Every function runs in a worker thread and may wait for the store opened in the background; a
store error (:class:`~dokoro_store.errors.DokoroError`) reaches the client as an MCP error that
carries its message (the fix), never a bare "error reading resource".
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from dokoro_store.errors import DokoroError, NotFoundError
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.resources import Resource
from pydantic import Field

from dokoro_server.app import AppState

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = [
    "PromptSpec",
    "ResourceSpec",
    "TemplateSpec",
    "add_prompts",
    "add_resources",
    "current_app",
]

_CURRENT_APP: contextvars.ContextVar[AppState | None] = contextvars.ContextVar("dokoro_current_app", default=None)


@contextlib.contextmanager
def serving(app: AppState) -> Iterator[None]:
    """While a request is handled: :func:`current_app` is ``app`` (the store middleware sets it)."""
    token = _CURRENT_APP.set(app)
    try:
        yield
    finally:
        _CURRENT_APP.reset(token)


def current_app() -> AppState:
    """The state of the session whose request is being handled."""
    app = _CURRENT_APP.get()
    if app is None:  # pragma: no cover - a wiring bug, not a user error
        raise RuntimeError("dokoro resources need the dokoro server (build it with dokoro_server.build_server)")
    return app


@dataclass(frozen=True)
class ResourceSpec:
    """A resource with a fixed URI; ``fn(app)`` returns its text. Name: the function's, dashed."""

    uri: str
    fn: Callable[[AppState], str]
    title: str
    mime_type: str = "text/markdown"

    @property
    def name(self) -> str:
        return _dashed(self.fn)


@dataclass(frozen=True)
class TemplateSpec:
    """A resource template (``dokoro://plans/{id}``); ``fn(ctx, **variables)`` returns the text."""

    uri_template: str
    fn: Callable[..., str]
    title: str
    mime_type: str = "text/markdown"


@dataclass(frozen=True)
class PromptSpec:
    """A prompt; ``fn(ctx, **arguments)`` returns its messages. The name is the function's with
    dashes (``resume_session`` -> ``resume-session``)."""

    fn: Callable[..., Any]
    title: str

    @property
    def name(self) -> str:
        return _dashed(self.fn)


def _dashed(fn: Callable[..., Any]) -> str:
    return fn.__name__.replace("_", "-")


def _description(fn: Callable[..., Any]) -> str | None:
    return inspect.cleandoc(fn.__doc__) if fn.__doc__ else None


class _StoreResource(Resource):
    """A fixed-URI resource whose text comes from the session's state."""

    fn: Callable[[AppState], str] = Field(exclude=True)

    async def read(self) -> str:
        app = current_app()
        try:
            return await anyio.to_thread.run_sync(self.fn, app)
        except DokoroError as exc:
            raise _resource_error(exc) from exc


def _resource_error(exc: DokoroError) -> ResourceError:
    return ResourceNotFoundError(str(exc)) if isinstance(exc, NotFoundError) else ResourceError(str(exc))


def _guarded_template(fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except DokoroError as exc:
            raise _resource_error(exc) from exc

    return wrapper


def add_resources(
    mcp: MCPServer[Any], resources: Sequence[ResourceSpec] = (), templates: Sequence[TemplateSpec] = ()
) -> None:
    """Register fixed-URI resources and resource templates on ``mcp`` (description = docstring)."""
    for spec in resources:
        mcp.add_resource(
            _StoreResource(
                uri=spec.uri,
                name=spec.name,
                title=spec.title,
                description=_description(spec.fn),
                mime_type=spec.mime_type,
                fn=spec.fn,
            )
        )
    for template in templates:
        mcp.resource(
            template.uri_template,
            name=_dashed(template.fn),
            title=template.title,
            description=_description(template.fn),
            mime_type=template.mime_type,
        )(_guarded_template(template.fn))


def add_prompts(mcp: MCPServer[Any], prompts: Sequence[PromptSpec]) -> None:
    """Register prompts on ``mcp`` (description = docstring; arguments = the function's parameters)."""
    for spec in prompts:
        mcp.prompt(spec.name, title=spec.title, description=_description(spec.fn))(spec.fn)
