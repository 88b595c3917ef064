"""A property-based fuzz of every tool of the unified server, as a hostile client would call it.

Arguments are drawn from each tool's own input schema (read from ``tools/list`` at run time, so a
tool added later is fuzzed too) mixed with hostile values: empty, huge, path traversal, NUL, lone
surrogates, SQL and full-text syntax, extreme integers, wrong types, missing required arguments
and unknown keys. Every call must answer within a generous bound with a result, or with an error
result whose message says what is wrong (never a traceback, never a bare internal error); the
server must stay up, and afterwards the store must pass an integrity check and still answer a
read tool.

SQLite, and PostgreSQL in the test marked slow, each with a modest number of examples;
``DOKORO_FUZZ_EXAMPLES=N`` sets the examples led by each tool and ``DOKORO_FUZZ_RANDOM=1`` draws
new ones instead of CI's fixed ones (docs/reliability.md).

The fuzz runs as root on CI machines, so path arguments are drawn from relative paths and
traversals that stay inside the test's folder (the server's cwd is four levels down in it) and
from read-only system files: a random absolute path could make a tool create folders anywhere.
"""

from __future__ import annotations

import collections
import importlib
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import anyio.from_thread
import pytest
from dokoro.server import TOOL_PACKAGES
from dokoro_server import Register
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, Tool

CALL_BOUND = 30.0  # seconds; generous, the machine may be loaded: a hang, not slowness, fails
# Examples led by each tool (the first is the tool's simplest valid call), each followed by up to
# three calls of random tools.
# CI runs every test (slow ones too), so both variants keep this modest; a deliberate run sets more.
EXAMPLES = int(os.environ.get("DOKORO_FUZZ_EXAMPLES", "3"))
POSTGRES_EXAMPLES = int(os.environ.get("DOKORO_FUZZ_EXAMPLES", "2"))
# The same examples on every run (CI), unless DOKORO_FUZZ_RANDOM=1 explores new ones.
DERANDOMIZE = os.environ.get("DOKORO_FUZZ_RANDOM", "") != "1"

PATH_NAMES = {"projectPath", "root", "claimRoot", "subfolder", "source", "name", "filepath", "paths"}
INT64 = 2**63

# Hostile values by probe; a call carries one to three of them (or none), each counted.
HOSTILE: dict[str, list[Any]] = {
    "empty": ["", " ", [], {}],
    "huge": ["x" * 100_001, "word " * 200_001, ["y" * 10_000] * 200],  # over short bounds; over every bound
    "traversal": ["../../etc/passwd", "../../../x/../y", "/etc/passwd"],
    "nul": ["a\x00b", ["ok", "\x00"], {"k": "v\x00"}],
    "surrogate": ["\ud83d", "half \udc00 emoji", {"k": "\ud83d"}],  # (the SDK client cannot send one in a nested key)
    "syntax": ['"a" OR NOT', "*", "NEAR(a b) AND -c ^d:e", "'; DROP TABLE docs; --", "%_\\", "{{x}} ${HOME} $(id)"],
    "unicode": ["emoji \U0001f680 and \u00e9", "\u202e\u200b right-to-left", "日本語のテキスト"],
    "extreme int": [2**63, -(2**63), 2**63 - 1, 2**62, -1, 0, 2**31],
    "wrong type": [None, True, 1.5, math.inf, ["x"], {"a": 1}, "12"],
}
# Paths stay inside the test's folder, or name read-only files (never a device: reading one
# would not end).
PATHS = [
    "notes.md",
    "sub/dir/file.txt",
    "../../etc/passwd",
    "../../../x",
    "./././y",
    "/etc/passwd",
    "/proc/self/environ",
]
HOSTILE_PATHS: dict[str, list[Any]] = {
    "traversal": ["../../etc/passwd", "../../../../../../../../etc/shadow", "/etc/passwd", "/proc/self/environ"],
    "nul": ["a\x00b", "notes.md\x00.png"],
    "surrogate": ["\ud83d.png"],
    "empty": ["", " "],
    "huge": ["x" * 5_000, "a/" * 3_000],
    "wrong type": [None, 7, ["notes.md"], {"p": 1}],
}
UNKNOWN_KEYS = ["unknown", "Query", "__proto__", "limit ", "\ud83d"]


@pytest.fixture
def registers() -> Sequence[Register]:
    return [importlib.import_module(name).register for name in TOOL_PACKAGES]


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """Deep inside the test's folder: traversals from here stay in it."""
    folder = tmp_path / "w" / "a" / "b" / "c"
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("# notes\n", encoding="utf-8")
    return folder


# ----------------------------------------------------------------------------- strategies
def _from_schema(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values valid for ``schema`` (the subset of JSON Schema pydantic emits for tool arguments)."""
    if "anyOf" in schema:
        return st.one_of([_from_schema(option, depth) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        longest = min(schema.get("maxLength", 50), 50)
        return st.text(min_size=min(schema.get("minLength", 0), longest), max_size=longest)
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -100) + 1 if "exclusiveMinimum" in schema else -100)
        high = schema.get(
            "maximum", schema.get("exclusiveMaximum", 10**6) - 1 if "exclusiveMaximum" in schema else 10**6
        )
        return st.one_of(st.integers(low, min(high, low + 1000)), st.sampled_from([low, high]))
    if kind == "number":
        low, high = (
            schema.get("minimum", schema.get("exclusiveMinimum")),
            schema.get("maximum", schema.get("exclusiveMaximum")),
        )
        return st.floats(
            low,
            high,
            allow_nan=False,
            allow_infinity=False,
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = _from_schema(schema.get("items", {}), depth + 1) if depth < 2 else st.text(max_size=5)
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 5), 5))
    if kind == "object":
        values = st.one_of(st.text(max_size=20), st.integers(-(2**31), 2**31), st.booleans(), st.none())
        return st.dictionaries(st.text(min_size=1, max_size=10), values, max_size=4)
    return st.sampled_from(HOSTILE["wrong type"])


def _valid(name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if name in PATH_NAMES:
        paths = st.sampled_from(PATHS)
        return st.lists(paths, min_size=1, max_size=3) if _is_array(schema) else paths
    return _from_schema(schema)


def _hostile(name: str) -> st.SearchStrategy[tuple[str, Any]]:
    table = HOSTILE_PATHS if name in PATH_NAMES else HOSTILE
    return st.sampled_from(sorted(table)).flatmap(lambda kind: st.tuples(st.just(kind), st.sampled_from(table[kind])))


def _is_array(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array" or any(option.get("type") == "array" for option in schema.get("anyOf", []))


Drawn = tuple[str, dict[str, Any], tuple[str, ...]]  # tool, arguments, the probes it carries


def _call_of(tool: Tool) -> st.SearchStrategy[Drawn]:
    properties: dict[str, Any] = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))

    @st.composite
    def draw(data: st.DrawFn) -> Drawn:
        probes: list[str] = []
        arguments: dict[str, Any] = {}
        for name, schema in properties.items():
            if name in required or data(st.booleans()):
                arguments[name] = data(_valid(name, schema))
        # Half the calls are valid; the others carry one to three hostile values.
        hostile = data(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))
        for _ in range(hostile):
            probe = data(st.sampled_from(["value", "value", "value", "missing", "unknown key"]))
            if probe == "missing" and required:
                arguments.pop(data(st.sampled_from(sorted(required))), None)
                probes.append("missing required")
            elif probe == "unknown key" or not properties:
                arguments[data(st.sampled_from(UNKNOWN_KEYS))] = "x"
                probes.append("unknown key")
            else:
                name = data(st.sampled_from(sorted(properties)))
                kind, value = data(_hostile(name))
                arguments[name] = value
                probes.append(kind)
        return tool.name, arguments, tuple(probes)

    return draw()


def calls(tools: list[Tool]) -> st.SearchStrategy[list[Drawn]]:
    return st.lists(st.sampled_from(tools).flatmap(_call_of), max_size=3)


# ----------------------------------------------------------------------------- checks
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+")


def _text(outcome: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in outcome.content)


async def _call(client: Client, drawn: Drawn, seen: collections.Counter[str]) -> None:
    name, arguments, probes = drawn
    with anyio.fail_after(CALL_BOUND):
        outcome = await client.call_tool(name, arguments)
    text = _text(outcome)
    assert outcome.content, f"{name} answered nothing to {arguments!r:.300}"
    assert not _TRACEBACK.search(text), f"{name} leaked a traceback: {text[:500]}"
    if outcome.is_error:
        assert text.strip(), f"{name} failed without a message"
        assert "internal error" not in text, f"{name} crashed on {arguments!r:.300}: {text}"
        assert not text.startswith("Error executing tool"), f"{name}: a bare SDK error: {text[:300]}"
    seen["calls"] += 1
    seen["error results" if outcome.is_error else "results"] += 1
    seen[f"tool {name}"] += 1
    for probe in probes or ("valid",):
        seen[f"probe {probe}"] += 1


async def _still_answers(client: Client) -> None:
    with anyio.fail_after(CALL_BOUND):
        outcome = await client.call_tool("dokoro_recall", {"query": "anything"})
    assert not outcome.is_error, _text(outcome)


def _integrity(store_url: str | None, root: Path) -> None:
    from dokoro_store import Store
    from sqlalchemy import inspect, text

    with Store.open(root, database_url=store_url) as store, store.db.read() as session:
        if store_url is None:
            assert [row[0] for row in session.execute(text("PRAGMA integrity_check"))] == ["ok"]
            assert [row[0] for row in session.execute(text("PRAGMA foreign_key_check"))] == []
        else:
            for table in inspect(session.connection()).get_table_names():
                session.execute(text(f'SELECT count(*) FROM "{table}"')).scalar_one()


# ----------------------------------------------------------------------------- the fuzz
def _fuzz_tool(
    portal: Any, client: Client, tool: Tool, tools: list[Tool], examples: int, seen: collections.Counter[str]
) -> None:
    @settings(max_examples=examples, deadline=None, database=None, derandomize=DERANDOMIZE, print_blob=True)
    @given(st.data())
    def fuzz(data: st.DataObject) -> None:
        drawn = [data.draw(_call_of(tool), label="call"), *data.draw(calls(tools), label="then")]
        for call in drawn:
            portal.call(_call, client, call, seen)
        portal.call(_still_answers, client)

    fuzz()


def _fuzz(make_client: Any, store_url: str | None, root: Path, examples: int) -> collections.Counter[str]:
    seen: collections.Counter[str] = collections.Counter()
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(make_client()) as client,
    ):
        tools = portal.call(client.list_tools).tools
        assert len(tools) > 60

        for tool in tools:  # each tool leads its own examples, so every one is called
            _fuzz_tool(portal, client, tool, tools, examples, seen)
        # Every tool was called at least once over the run (otherwise the run proves little).
        called = {key for key in seen if key.startswith("tool ")}
        assert len(called) == len(tools), sorted(called)
        portal.call(_still_answers, client)
    _integrity(store_url, root)
    return seen


def test_every_tool_answers_hostile_arguments_with_a_result_or_a_message(make_client, root: Path) -> None:
    seen = _fuzz(make_client, None, root, EXAMPLES)
    _report("sqlite", seen)


@pytest.mark.slow
@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_every_tool_answers_hostile_arguments_on_postgresql(make_client, root: Path, store_url: str | None) -> None:
    seen = _fuzz(make_client, store_url, root, POSTGRES_EXAMPLES)
    _report("postgresql", seen)


# ----------------------------------------------------------------------------- resource templates
# Hostile values of a URI variable (``dokoro://plans/{id}``), sent as written and percent-encoded.
# Lone surrogates are left out: the client cannot encode them into a URI at all.
HOSTILE_URI_VALUES = [
    "",
    " ",
    "plan-nope",
    "../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e/%2e%2e/etc/passwd",
    "/etc/passwd",
    "a/b",
    "a\x00b",
    "%00",
    "%ZZ",
    "?x=1",
    "#fragment",
    "{id}",
    "x" * 100_001,
    "'; DROP TABLE plans; --",
    '"a" OR NOT *',
    "emoji \U0001f680 \u202e\u200b",
    "日本語",
]


def _uri_value() -> st.SearchStrategy[str]:
    plain = st.one_of(
        st.sampled_from(HOSTILE_URI_VALUES), st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
    )
    return st.tuples(plain, st.booleans()).map(lambda drawn: quote(drawn[0], safe="") if drawn[1] else drawn[0])


async def _read_hostile(client: Client, uri: str, seen: collections.Counter[str]) -> None:
    """A read of a URI naming nothing: an invalid-params error whose message says what is wrong."""
    with anyio.fail_after(CALL_BOUND):
        try:
            contents = (await client.read_resource(uri)).contents
        except MCPError as exc:
            message = exc.error.message
            assert message.strip(), f"{uri!r:.200} failed without a message"
            assert not _TRACEBACK.search(message), f"{uri!r:.200} leaked a traceback: {message[:500]}"
            # Unknown or malformed: the client's fault, said as such (never an internal error).
            assert exc.error.code == INVALID_PARAMS, f"{uri!r:.200}: {exc.error.code} {message[:300]}"
            seen["resource errors"] += 1
            return
    raise AssertionError(f"{uri!r:.200} names no resource, yet read: {contents!r:.300}")


def _fuzz_template(portal: Any, client: Client, uri_template: str, seen: collections.Counter[str]) -> None:
    variables = re.findall(r"{([^}]+)}", uri_template)
    for value in HOSTILE_URI_VALUES:  # each listed value, as written and percent-encoded, then drawn ones
        for sent in (value, quote(value, safe="")):
            portal.call(_read_hostile, client, _expand(uri_template, dict.fromkeys(variables, sent)), seen)

    @settings(max_examples=30, deadline=None, database=None, derandomize=DERANDOMIZE, print_blob=True)
    @given(st.fixed_dictionaries({name: _uri_value() for name in variables}))
    def fuzz(values: dict[str, str]) -> None:
        portal.call(_read_hostile, client, _expand(uri_template, values), seen)

    fuzz()


def _expand(uri_template: str, values: dict[str, str]) -> str:
    uri = uri_template
    for name, value in values.items():
        uri = uri.replace(f"{{{name}}}", value)
    return uri


def test_every_resource_template_answers_hostile_ids_with_a_resource_or_a_clear_error(make_client, root: Path) -> None:
    seen: collections.Counter[str] = collections.Counter()
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(make_client()) as client,
    ):
        templates = portal.call(client.list_resource_templates).resource_templates
        assert "dokoro://plans/{id}" in [t.uri_template for t in templates]
        plan = portal.call(client.call_tool, "dokoro_plan_create", {"title": "Kept", "items": ["one", "two"]})
        plan_uri = f"dokoro://plans/{plan.structured_content['id']}"  # type: ignore[index]
        before = portal.call(client.read_resource, plan_uri).contents

        for template in templates:  # every template, so one added later is fuzzed too
            _fuzz_template(portal, client, template.uri_template, seen)

        # The store is intact: the plan reads as before, the server still answers a tool.
        assert portal.call(client.read_resource, plan_uri).contents == before
        portal.call(_still_answers, client)
    _integrity(None, root)
    assert seen["resource errors"] >= 2 * len(HOSTILE_URI_VALUES)


def _report(backend: str, seen: collections.Counter[str]) -> None:
    """The counts docs/reliability.md quotes (shown with ``pytest -s``)."""
    tools = sum(1 for key in seen if key.startswith("tool "))
    probes = ", ".join(f"{key[6:]} {n}" for key, n in sorted(seen.items()) if key.startswith("probe "))
    print(
        f"\nfuzz ({backend}): {seen['calls']} calls over {tools} tools, {seen['results']} results, "
        f"{seen['error results']} error results; probes: {probes}"
    )
