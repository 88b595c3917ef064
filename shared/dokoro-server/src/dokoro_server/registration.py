"""Tool registration: a :class:`ToolSpec` per tool function, added with :func:`add_tools`.

Every call answers with a result or an error result that says what to fix:

- the arguments are checked before the tool runs: an unknown argument is refused with the list of
  valid ones (the published input schema says ``additionalProperties: false``), and a string
  carrying a NUL or a lone UTF-16 surrogate is refused by name (no store can keep either);
- a value outside the input schema (type, bounds, length) is refused argument by argument, with
  the bound and the offending value cut short;
- the store's :class:`~dokoro_store.errors.DokoroError` (and a refusal of the file system)
  becomes an error result carrying its own message;
- anything else is a dokoro bug: logged with its traceback on the server, answered with an
  error result naming the exception's type (never its text, which may quote stored data).

The tools live in the kit's own table on a :class:`DokoroServer` (an ``MCPServer`` whose public
``list_tools`` and ``call_tool`` serve that table first), so nothing here writes the SDK's
private state: each tool is the SDK's public ``Tool`` (built with ``Tool.from_function``) with
dokoro's checks around its ``run``, and its output schema inlined (:mod:`dokoro_server.schemas`).

Building a tool's schemas (its argument model, input and output JSON schemas) is most of what a
server does at start beyond importing the SDK, so an entry point keeps them between starts in a
:class:`ToolCache`, like bytecode: a tool module whose sources, or whose SDK and pydantic, have
not changed since is listed from the cache (the listing the client reads), and its ``Tool`` is
built at its first call. Without a cache (tests, the shared HTTP server) every tool is built at
once.

Why the kit's table and not the SDK's tool manager alone (issue 43, "one tool registry"): the SDK
takes a built ``Tool`` only in ``MCPServer(tools=...)``, before any package's ``register(mcp)``
has run; after that its public door is ``add_tool(fn)``, which builds every schema at once. The
cache pays 0.2 s of CPU per ``dokoro-core`` start and 0.36 s per ``dokoro`` start, a quarter to
two fifths of a start (``bench/tool_schemas.py``, docs/benchmarks.md "At the SDK's floor"), so it
is kept, on the SDK's public API only (``tests/test_architecture.py`` checks that).
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import functools
import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dokoro_store import DokoroError, InvalidArgumentError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from mcp_types import Tool as ListedTool
from pydantic import ValidationError

from dokoro_server.app import AppState
from dokoro_server.outcome import mark_rejected
from dokoro_server.schemas import lean_schema
from dokoro_server.shown_paths import rewrite_of, rewritten

__all__ = ["DokoroServer", "ToolCache", "ToolSpec", "add_tools"]

log = logging.getLogger("dokoro")


@dataclass(frozen=True)
class ToolSpec:
    """A tool function and how it behaves, for :func:`add_tools`.

    The hints follow one rule (docs/servers.md, "Annotations"): ``read_only`` only when the tool
    writes nothing at all (no row, no file, no index or cache entry; ``tests/test_read_only_tools.py``
    checks it); ``destructive`` when a call may remove or overwrite data (with any arguments);
    ``idempotent`` when repeating a call with the same arguments changes nothing more;
    ``open_world`` when the tool reaches outside the store (git, an Ollama model).
    """

    fn: Callable[..., Any]
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )


def _noticed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``; when the store redacted secrets from what the call wrote and the answer does
    not say so already, add a line saying which kinds (the store redacts at its lowest layer, so a
    tool need not know)."""
    from dokoro_store import collect_redactions
    from mcp_types import CallToolResult, TextContent

    with collect_redactions() as found:
        outcome = fn(*args, **kwargs)
    if found and isinstance(outcome, CallToolResult) and not outcome.is_error:
        said = " ".join(getattr(block, "text", "") for block in outcome.content)
        if "redacted" not in said.lower():
            kinds = ", ".join(dict.fromkeys(found))
            outcome.content.append(TextContent(type="text", text=f"🔒 secrets redacted before storing ({kinds})"))
    if isinstance(outcome, CallToolResult) and not outcome.is_error:
        from dokoro_store import take_announcements

        # Said once: a store converted from the original dokoro on this process's open.
        for text in take_announcements():
            outcome.content.append(TextContent(type="text", text=text))
    return outcome


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return _noticed(fn, *args, **kwargs)
        except DokoroError as exc:
            raise (ArgumentError if isinstance(exc, InvalidArgumentError) else ToolError)(str(exc)) from exc
        except OSError as exc:
            # The disk said no (permissions, space, a busy lock file): tell the agent what and
            # where, rather than a bare "Error executing tool".
            log.warning("dokoro: %s failed on the file system: %s", fn.__name__, exc)
            where = f" ({exc.filename})" if exc.filename else ""
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ToolError(f"file system error{where}: {reason}; check the path and permissions, then retry") from exc

    return wrapper


class _Entry:
    """A dokoro tool of a server: what ``tools/list`` shows, and its ``Tool``, built once."""

    def __init__(self, spec: ToolSpec, listing: ListedTool, tool: _DokoroTool | None = None) -> None:
        self.spec = spec
        self.listing = listing
        self._tool = tool

    @property
    def built(self) -> bool:
        return self._tool is not None

    def tool(self) -> _DokoroTool:
        if self._tool is None:
            self._tool = _DokoroTool.build(self.spec, description=self.listing.description)
        return self._tool


class DokoroServer(MCPServer[AppState]):
    """An ``MCPServer`` serving dokoro's tools from the kit's own table (see the module docstring).

    The SDK calls the public :meth:`list_tools` and :meth:`call_tool` for ``tools/list`` and
    ``tools/call``; both serve the kit's tools and hand any other name to the SDK's own.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dokoro_tools: dict[str, _Entry] = {}

    def add_entry(self, spec: ToolSpec, listing: ListedTool, tool: _DokoroTool | None = None) -> None:
        """Serve ``spec``'s tool as ``listing`` shows it (its ``Tool`` built now if given, else at its first call)."""
        if listing.name in self._dokoro_tools:
            log.warning("dokoro: tool %s is registered twice; keeping the first", listing.name)
            return
        self._dokoro_tools[listing.name] = _Entry(spec, listing, tool)

    def has_tool(self, name: str) -> bool:
        return name in self._dokoro_tools

    def tool_annotations(self, name: str) -> ToolAnnotations | None:
        """The annotations of the dokoro tool ``name`` (None: no such tool)."""
        entry = self._dokoro_tools.get(name)
        return None if entry is None else entry.spec.annotations

    def unbuilt_tools(self) -> set[str]:
        """The tools listed from a schema cache whose ``Tool`` is not built yet."""
        return {name for name, entry in self._dokoro_tools.items() if not entry.built}

    async def list_tools(self) -> list[ListedTool]:
        return [entry.listing for entry in self._dokoro_tools.values()] + await super().list_tools()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[AppState, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        entry = self._dokoro_tools.get(name)
        if entry is None:
            return await super().call_tool(name, arguments, context)
        rewrite = rewrite_of(context)
        try:
            result: CallToolResult | InputRequiredResult = await entry.tool().run(
                arguments, context if context is not None else Context(mcp_server=self), convert_result=True
            )
        except ToolError as exc:  # the message names files relative to the project or the store
            if rewrite is None:
                raise
            raise type(exc)(rewrite(str(exc))) from exc
        if rewrite is not None and isinstance(result, CallToolResult):
            result = rewritten(result, rewrite)
        return result


def _listing(tool: Tool) -> ListedTool:
    """What ``tools/list`` shows of ``tool`` (as the SDK's ``MCPServer.list_tools`` builds it)."""
    return ListedTool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.parameters,
        output_schema=tool.output_schema,
        annotations=tool.annotations,
        icons=tool.icons,
        _meta=tool.meta,
    )


def _server(mcp: MCPServer[Any]) -> DokoroServer:
    if not isinstance(mcp, DokoroServer):
        raise TypeError("dokoro tools need the dokoro server: build it with dokoro_server.build_server")
    return mcp


def add_tools(mcp: MCPServer[Any], specs: Sequence[ToolSpec]) -> None:
    """Register every spec on ``mcp`` (name = function name, description = docstring).

    While a :class:`ToolCache` is active (:meth:`ToolCache.active`), tools whose schemas it holds
    are listed from it and built at their first call.
    """
    server = _server(mcp)
    cache = _ACTIVE_CACHE.get()
    if cache is not None and cache.add(server, specs):
        return
    built = []
    for spec in specs:
        if server.has_tool(spec.fn.__name__):
            log.warning("dokoro: tool %s is registered twice; keeping the first", spec.fn.__name__)
            continue
        tool = _DokoroTool.build(spec)
        server.add_entry(spec, _listing(tool), tool)
        built.append(tool)
    if cache is not None and len(built) == len(specs):
        cache.remember(specs, built)


_ACTIVE_CACHE: contextvars.ContextVar[ToolCache | None] = contextvars.ContextVar("dokoro_tool_cache", default=None)

# How much of a refused value an error message quotes.
_QUOTE = 80
_SURROGATE = re.compile("[\ud800-\udfff]")


class ArgumentError(ToolError):
    """A call refused for its arguments (the caller's mistake), answered like any tool error but
    captured as ``rejected`` rather than as the tool's failure."""


class _DokoroTool(Tool):
    """The SDK's tool, with dokoro's argument checks and error messages (see the module docstring)."""

    @classmethod
    def build(cls, spec: ToolSpec, description: str | None = None) -> _DokoroTool:
        tool = cls.from_function(
            _guarded(spec.fn),
            name=spec.fn.__name__,
            title=spec.title,
            annotations=spec.annotations,
            description=description,
        )
        assert isinstance(tool, _DokoroTool)  # from_function builds ``cls``
        tool.parameters["additionalProperties"] = False
        # The published output schema, inlined for a cheap check by the client (dokoro_server/schemas.py);
        # the SDK reads the metadata's schema live, and the result is still validated by the model.
        tool.fn_metadata.output_schema = lean_schema(tool.fn_metadata.output_schema)
        return tool

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            return await self._run(arguments, context, convert_result)
        except ArgumentError:
            mark_rejected()  # the caller's mistake: captured as rejected, not as the tool's failure
            raise

    async def _run(self, arguments: dict[str, Any], context: Any, convert_result: bool) -> Any:
        _check_arguments(self.name, self.parameters, arguments)
        try:
            return await super().run(arguments, context, convert_result=convert_result)
        except UnexpectedToolError as exc:
            cause = exc.__cause__ or exc
            log.error("dokoro: %s crashed", self.name, exc_info=cause)
            raise ToolError(
                f"{self.name} hit an internal error ({type(cause).__name__}): a dokoro bug, logged on the server "
                "with its traceback. Check with a read tool whether the call took effect; if it repeats with "
                "other arguments too, report it."
            ) from cause
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ArgumentError(_invalid_arguments(self.name, exc.__cause__)) from exc.__cause__
            if isinstance(exc.__cause__, ToolError):  # the tool's own message, unprefixed
                kind = ArgumentError if isinstance(exc.__cause__, ArgumentError) else ToolError
                raise kind(str(exc.__cause__)) from exc.__cause__
            raise


def _check_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Refuse unknown arguments and strings no store can keep, naming each and the fix."""
    properties: dict[str, Any] = schema.get("properties", {})
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        required = set(schema.get("required", ()))
        valid = ", ".join(f"{name} (required)" if name in required else name for name in properties) or "none"
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, list(properties), n=1)
            hints.append(f"{_quote(name)} (did you mean {close[0]}?)" if close else _quote(name))
        raise ArgumentError(
            f"{tool} has no argument {', '.join(hints)}; its arguments are: {valid}. "
            "Remove the unknown argument or fix its spelling, then call again."
        )
    for name, value in arguments.items():
        problem = _unstorable(value)
        if problem is not None:
            raise ArgumentError(
                f"{tool}: argument {name} contains {problem}; remove it (or send valid Unicode) and retry."
            )


def _unstorable(value: Any) -> str | None:
    """What in ``value`` (a JSON value) no store can keep: a NUL or a lone UTF-16 surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "a NUL character (\\u0000)"
            if (found := _SURROGATE.search(item)) is not None:
                return f"a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), e.g. half of an emoji cut in two"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def _invalid_arguments(tool: str, error: ValidationError) -> str:
    """One line per refused argument: where, what the schema wants, and the value cut short."""
    lines = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        got = "" if item["type"] == "missing" else f" (got {_quote(item.get('input'))})"
        lines.append(f"{where}: {item['msg']}{got}")
    shown = "; ".join(lines[:10]) + (f"; and {len(lines) - 10} more" if len(lines) > 10 else "")
    return f"invalid arguments for {tool}: {shown}. Fix them to match the tool's input schema and call again."


def _quote(value: Any) -> str:
    text = repr(value)
    if len(text) > _QUOTE:
        text = f"{text[:_QUOTE]}… ({len(text)} characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class ToolCache:
    """The schemas of a server's tools, kept in a JSON file between starts.

    An entry per tool module, stamped with a fingerprint of what the schemas derive from: the
    sources of the module's package, of ``dokoro_store`` and of this kit (paths, sizes and
    modification times), the versions of the SDK and pydantic (their files), and Python's. A
    changed fingerprint rebuilds that module's tools and rewrites its entry.
    """

    VERSION = 4  # 4: output schemas inlined (dokoro_server/schemas.py)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, dict[str, Any]] = {}
        self._dirty = False
        self._trees: dict[str, str] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == self.VERSION and isinstance(data.get("modules"), dict):
            self._entries = data["modules"]

    @contextlib.contextmanager
    def active(self) -> Iterator[ToolCache]:
        """While active, :func:`add_tools` lists tools from this cache and fills it."""
        token = _ACTIVE_CACHE.set(self)
        try:
            yield self
        finally:
            _ACTIVE_CACHE.reset(token)

    # ------------------------------------------------------------------ entries
    def add(self, mcp: DokoroServer, specs: Sequence[ToolSpec]) -> bool:
        """Register ``specs`` from the cache; False (nothing registered) when it has no valid entry."""
        key, fingerprint = self._key(specs), self._fingerprint(specs)
        entry = self._entries.get(key)
        if entry is None or entry.get("fingerprint") != fingerprint:
            return False
        tools = entry.get("tools")
        if not isinstance(tools, dict) or set(tools) != {spec.fn.__name__ for spec in specs}:
            return False
        try:
            listings = {spec.fn.__name__: ListedTool.model_validate(tools[spec.fn.__name__]) for spec in specs}
        except ValidationError:
            return False
        for spec in specs:
            mcp.add_entry(spec, listings[spec.fn.__name__])
        return True

    def remember(self, specs: Sequence[ToolSpec], tools: Sequence[Tool]) -> None:
        """Keep the listings of ``tools``, just built from ``specs``, for the next start."""
        listings: dict[str, Any] = {}
        for tool in tools:
            if tool.resolved_params or tool.is_async:
                return  # not a plain dokoro tool: always built at start
            listings[tool.name] = _listing(tool).model_dump(mode="json", by_alias=True, exclude_none=True)
        self._entries[self._key(specs)] = {"fingerprint": self._fingerprint(specs), "tools": listings}
        self._dirty = True

    def save(self) -> None:
        """Write the cache if it changed (atomically; a failure only costs the next start time)."""
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"version": self.VERSION, "modules": self._entries}), encoding="utf-8")
            temporary.replace(self.path)
        except OSError as exc:
            log.info("dokoro: could not write the tool cache %s: %s", self.path, exc)
        else:
            self._dirty = False

    # ------------------------------------------------------------------ fingerprint
    @staticmethod
    def _key(specs: Sequence[ToolSpec]) -> str:
        return ",".join(sorted({spec.fn.__module__ for spec in specs}))

    def _fingerprint(self, specs: Sequence[ToolSpec]) -> str:
        packages = {spec.fn.__module__.partition(".")[0] for spec in specs} | {"dokoro_store", "dokoro_server"}
        parts = [sys.version, *(_file_stamp(name) for name in ("mcp", "mcp_types", "pydantic", "pydantic_core"))]
        parts += [self._tree(name) for name in sorted(packages)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def _tree(self, package: str) -> str:
        stamp = self._trees.get(package)
        if stamp is None:
            module = sys.modules.get(package)
            where = getattr(module, "__file__", None)
            stamp = _tree_stamp(Path(where).parent) if where else f"{package}: not imported"
            self._trees[package] = stamp
        return stamp


def _file_stamp(package: str) -> str:
    module = sys.modules.get(package)
    where = getattr(module, "__file__", None)
    if not where:
        return f"{package}: not imported"
    stat = Path(where).stat()
    return f"{where} {stat.st_size} {stat.st_mtime_ns}"


def _tree_stamp(root: Path) -> str:
    """Paths, sizes and modification times of every ``.py`` file under ``root``, hashed."""
    lines: list[str] = []
    folders = [str(root)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(".py"):
                    stat = entry.stat()
                    lines.append(f"{entry.path} {stat.st_size} {stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()
