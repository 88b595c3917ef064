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

Change notifications (:class:`ResourceUpdates`): after a successful call of a tool that is not
read-only, every fixed-URI resource that tool may have changed (``ResourceSpec.changed_by``; by
default any such tool) is announced as updated on the client's ``subscriptions/listen`` stream, the
SDK's way at protocol 2026-07-28. The lists of resources and prompts never change while a server
runs, so no list-changed event is ever sent.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import typing
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from dokoro_store import DokoroError, InvalidArgumentError, NotFoundError
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.server.mcpserver.resources import Resource
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import Field, PrivateAttr
from pydantic.fields import FieldInfo

from dokoro_server.app import AppState

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.subscriptions import SubscriptionBus

    from dokoro_server.registration import DokoroServer

__all__ = [
    "PromptSpec",
    "ResourceSpec",
    "ResourceUpdates",
    "TemplateSpec",
    "add_prompts",
    "add_resources",
    "current_app",
    "resource_updates",
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
    """A resource with a fixed URI; ``fn(app)`` returns its text. Name: the function's, dashed.

    ``changed_by``: the tools whose calls may change it; ``None`` = any tool not marked read-only.
    """

    uri: str
    fn: Callable[[AppState], str]
    title: str
    mime_type: str = "text/markdown"
    changed_by: frozenset[str] | None = None

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


def _resource_error(exc: DokoroError) -> Exception:
    # The client's fault (an unknown or malformed id) is invalid params, as a missing resource is.
    if isinstance(exc, NotFoundError):
        return ResourceNotFoundError(str(exc))
    if isinstance(exc, InvalidArgumentError):
        return MCPError(INVALID_PARAMS, str(exc))
    return ResourceError(str(exc))


def _guarded_template(fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except DokoroError as exc:
            raise _resource_error(exc) from exc

    return wrapper


class ResourceUpdates:
    """Announces the fixed-URI resources a tool call may have changed (see the module doc), on
    ``bus``, the subscription bus the server was built with."""

    def __init__(self, bus: SubscriptionBus) -> None:
        self._bus = bus
        self._server: DokoroServer | None = None
        self._watched: dict[str, frozenset[str] | None] = {}

    def bind(self, mcp: DokoroServer) -> None:
        """Serve the notifications of ``mcp`` (:func:`add_resources` on it then registers here)."""
        self._server = mcp
        _UPDATES[mcp] = self

    def watch(self, uri: str, changed_by: frozenset[str] | None) -> None:
        self._watched[uri] = changed_by

    def changed_by(self, tool_name: str) -> list[str]:
        """The URIs a successful call of ``tool_name`` may have changed."""
        if self._server is None or not self._server.has_tool(tool_name):
            return []
        annotations = self._server.tool_annotations(tool_name)
        if annotations is not None and annotations.read_only_hint:
            return []
        return [uri for uri, tools in self._watched.items() if tools is None or tool_name in tools]

    def middleware(self) -> ServerMiddleware[Any]:
        """Middleware that publishes the updates after each successful tool call."""

        async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
            answer = await call_next(ctx)
            if ctx.method == "tools/call" and self._watched and self._server is not None:
                failed = answer.get("isError") if isinstance(answer, dict) else getattr(answer, "is_error", False)
                if not failed:
                    for uri in self.changed_by(str((ctx.params or {}).get("name", ""))):
                        await self._bus.publish(ResourceUpdated(uri=uri))
            return answer

        return middleware


_UPDATES: weakref.WeakKeyDictionary[MCPServer[Any], ResourceUpdates] = weakref.WeakKeyDictionary()


def resource_updates(mcp: MCPServer[Any]) -> ResourceUpdates:
    """The update announcer of a server built by :func:`~dokoro_server.build_server`."""
    return _UPDATES[mcp]


def add_resources(
    mcp: MCPServer[Any], resources: Sequence[ResourceSpec] = (), templates: Sequence[TemplateSpec] = ()
) -> None:
    """Register fixed-URI resources and resource templates on ``mcp`` (description = docstring)."""
    updates = _UPDATES.get(mcp)
    for spec in resources:
        if updates is not None:
            updates.watch(spec.uri, spec.changed_by)
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


def _guarded_prompt(fn: Callable[..., Any]) -> Callable[..., Any]:
    # The SDK answers any other exception of a prompt with a bare "Internal server error".
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DokoroError as exc:
            client_fault = isinstance(exc, NotFoundError | InvalidArgumentError)
            raise MCPError(INVALID_PARAMS if client_fault else INTERNAL_ERROR, str(exc)) from exc

    return wrapper


def add_prompts(mcp: MCPServer[Any], prompts: Sequence[PromptSpec]) -> None:
    """Register prompts on ``mcp`` (description = docstring; arguments = the function's parameters)."""
    for spec in prompts:
        fn = _guarded_prompt(spec.fn)
        context_kwarg = find_context_parameter(fn)
        mcp.add_prompt(
            _LazyPrompt(
                name=spec.name,
                title=spec.title,
                description=_description(spec.fn),
                arguments=_arguments(fn, context_kwarg),
                fn=fn,
                context_kwarg=context_kwarg,
            )
        )


def _arguments(fn: Callable[..., Any], context_kwarg: str | None) -> list[PromptArgument]:
    """A prompt's arguments from its signature: ``Annotated[..., Field(description=...)]``, required
    when without a default (what the SDK derives from the argument model it builds at first use)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    arguments = []
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.name == context_kwarg:
            continue
        metadata = getattr(hints.get(parameter.name), "__metadata__", ())
        described = next((m.description for m in metadata if isinstance(m, FieldInfo)), None)
        required = parameter.default is inspect.Parameter.empty
        arguments.append(PromptArgument(name=parameter.name, description=described, required=required))
    return arguments


class _LazyPrompt(Prompt):
    """A prompt listed from its signature; the SDK's prompt (argument model, validation) is built
    at its first use, as :class:`~dokoro_server.registration.ToolCache` does for tools: building
    them at start cost a server a few milliseconds of CPU for nothing when no prompt is used."""

    _built: Prompt | None = PrivateAttr(default=None)

    async def render(self, arguments: dict[str, Any] | None, context: Any) -> Any:
        if self._built is None:
            self._built = Prompt.from_function(self.fn, name=self.name, title=self.title, description=self.description)
        return await self._built.render(arguments, context)
