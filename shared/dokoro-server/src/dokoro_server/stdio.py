"""Serving over stdio with an answer for every request line, readable or not.

The SDK's stdio transport (``mcp.server.stdio``) hands a line it cannot parse to the server as an
exception, and the server's dispatcher only logs it at debug level: the client gets no reply and
waits until its own timeout. That is what a lone UTF-16 surrogate escape (``"\\ud83d"``, half of
an emoji cut by a JavaScript client) or a truncated line costs. :func:`run_stdio` sits between the
transport and the server and answers such a line with a JSON-RPC error: ``-32700`` (parse error)
when the line is not strict JSON, ``-32600`` (invalid request) when it is JSON but not one JSON-RPC
message. The reply carries the request's id whenever a lenient parse of the line can recover it
(so the client's pending call ends at once), else ``null`` as JSON-RPC 2.0 says. A broken
*response* from the client is only logged: a response is never answered.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

__all__ = ["malformed_reply", "run_stdio"]

log = logging.getLogger("dokoro")

_FORMAT = "send one JSON-RPC 2.0 message per line, as UTF-8 JSON without lone UTF-16 surrogate escapes"


async def run_stdio(mcp: MCPServer[Any]) -> None:
    """Serve ``mcp`` over the process's stdin and stdout (what ``mcp.run("stdio")`` does), answering
    malformed lines with a JSON-RPC error instead of dropping them."""
    server = mcp._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        answering = _AnsweringStream(read_stream, write_stream)
        await server.run(answering, write_stream, server.create_initialization_options())


class _AnsweringStream:
    """The transport's read stream less its exceptions, each answered on the write stream."""

    def __init__(self, inner: Any, replies: Any) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message (the dispatcher runs its handler in it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return cast(SessionMessage, item)
            reply = malformed_reply(item)
            if reply is not None:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._replies.send(SessionMessage(reply))

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _AnsweringStream:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _AnsweringStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def malformed_reply(error: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering a line the transport could not read (``None``: no reply is due).

    ``error`` is what the SDK's reader raised on the line: a pydantic ``ValidationError`` whose
    input is the raw line (not JSON) or the parsed value (not a JSON-RPC message).
    """
    if not isinstance(error, ValidationError):
        log.warning("dokoro: the stdio transport failed on a line: %r", error)
        unreadable = ErrorData(code=PARSE_ERROR, message=f"Parse error: {_FORMAT}")
        return JSONRPCError(jsonrpc="2.0", id=None, error=unreadable)
    details = error.errors(include_url=False)
    first = details[0] if details else None
    if first is not None and first["type"] == "json_invalid":
        raw = first.get("input")
        if isinstance(raw, str | bytes) and not raw.strip():
            return None  # a blank line between messages: nothing to answer
        value = _lenient(raw)
        if value is not None and _unicode_error(value):
            message = (
                'Parse error: the line has a lone UTF-16 surrogate escape (such as "\\ud83d", half of an emoji); '
                "send the character whole (a surrogate pair, or the UTF-8 character itself)"
            )
        else:
            message = f"Parse error: {first['msg']}; {_FORMAT}"
        if _is_response(value):
            log.warning("dokoro: dropped an unreadable response from the client: %s", first["msg"])
            return None
        return JSONRPCError(jsonrpc="2.0", id=_request_id(value), error=ErrorData(code=PARSE_ERROR, message=message))
    value = next((item.get("input") for item in details if isinstance(item.get("input"), dict)), None)
    if value is None and first is not None:
        value = first.get("input")
    if _is_response(value):
        log.warning("dokoro: dropped a malformed response from the client")
        return None
    if isinstance(value, list):
        message = "Invalid Request: batches are not supported; send one JSON-RPC message per line"
    else:
        message = (
            'Invalid Request: a request is {"jsonrpc": "2.0", "id": <string or integer>, "method": "<name>", '
            '"params": {...}} and a notification the same without "id"'
        )
    return JSONRPCError(jsonrpc="2.0", id=_request_id(value), error=ErrorData(code=INVALID_REQUEST, message=message))


def _lenient(raw: object) -> object:
    """The line parsed by Python's json module, which accepts lone surrogate escapes (or None)."""
    if not isinstance(raw, str | bytes):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _is_response(value: object) -> bool:
    return isinstance(value, dict) and "method" not in value and ("result" in value or "error" in value)


def _request_id(value: object) -> str | int | None:
    if isinstance(value, dict):
        found = value.get("id")
        if isinstance(found, str) and not _has_surrogate(found):
            return found
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return None


def _unicode_error(value: object) -> bool:
    """Whether a parsed JSON value holds a string UTF-8 cannot encode (a lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
