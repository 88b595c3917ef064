"""Every tool's input, as a client sees and sends it: bounded in the schema, checked before it runs.

The tools are those of the unified server and the bridge, enumerated at run time, so a tool added
later is held to the same rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from dokoro.server import BRIDGE_PACKAGES, TOOL_PACKAGES
from dokoro_server import Register
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def registers() -> Sequence[Register]:
    import importlib

    return [importlib.import_module(name).register for name in (*TOOL_PACKAGES, *BRIDGE_PACKAGES)]


def _unbounded(schema: dict[str, Any], where: str) -> Iterator[str]:
    """Every string, integer, array or object in ``schema`` that lacks an upper bound."""
    for option in schema.get("anyOf", []):
        yield from _unbounded(option, where)
    kind = schema.get("type")
    if kind == "string" and "enum" not in schema and "maxLength" not in schema:
        yield f"{where}: string without maxLength"
    if kind == "integer" and not (
        {"minimum", "exclusiveMinimum"} & schema.keys() and {"maximum", "exclusiveMaximum"} & schema.keys()
    ):
        yield f"{where}: integer without minimum and maximum"
    if kind == "array":
        if "maxItems" not in schema:
            yield f"{where}: array without maxItems"
        yield from _unbounded(schema.get("items", {}), f"{where}[]")
    if kind == "object" and "maxProperties" not in schema:
        yield f"{where}: object without maxProperties"


async def test_every_string_integer_list_and_mapping_argument_is_bounded_in_the_schema(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert len(tools) > 60
    problems = [
        problem
        for tool in tools
        for name, schema in tool.input_schema.get("properties", {}).items()
        for problem in _unbounded(schema, f"{tool.name}.{name}")
    ]
    assert problems == [], "\n".join(problems)
    assert all(tool.input_schema.get("additionalProperties") is False for tool in tools)


async def test_an_unknown_argument_is_refused_with_the_valid_ones(fail) -> None:
    message = await fail("dokoro_recall", query="deploy", limt=5)

    assert message.startswith("dokoro_recall has no argument 'limt' (did you mean limit?)")
    assert "its arguments are: query (required), limit, types" in message
    assert "fix its spelling" in message


async def test_an_integer_beyond_its_bound_is_refused_with_the_bound(fail) -> None:
    message = await fail("dokoro_session_summary_add", session_id="s", ai_model="m", summary="x", token_count=2**63)

    assert message.startswith("invalid arguments for dokoro_session_summary_add: token_count: ")
    assert "less than or equal to 1000000000" in message
    assert "9223372036854775808" in message


async def test_a_huge_query_is_refused_and_its_value_cut_short(fail) -> None:
    message = await fail("dokoro_session_recall", query="x" * 1_000_000)

    assert "query: String should have at most 10000 characters" in message
    assert "(1000002 characters)" in message
    assert len(message) < 500


@pytest.mark.parametrize("value", ["a\x00b", "half an emoji \ud83d"])
async def test_a_nul_or_a_lone_surrogate_is_refused_by_name(fail, value: str) -> None:
    message = await fail("dokoro_save_file", source=f"/tmp/{value}")

    assert message.startswith("dokoro_save_file: argument source contains ")
    assert "NUL" in message or "lone UTF-16 surrogate" in message


async def test_a_missing_argument_is_named(fail) -> None:
    message = await fail("dokoro_remember", type="fact", title="t")

    assert message.startswith("invalid arguments for dokoro_remember: body: Field required")


async def test_a_nested_value_is_checked_too(fail) -> None:
    message = await fail("dokoro_context_log", event={"note": "x\x00"})

    assert "argument event contains a NUL character" in message


async def test_a_mapping_is_bounded_by_its_keys_and_its_size(fail) -> None:
    too_big = await fail("dokoro_context_log", event={"note": "x" * 200_000})
    too_many = await fail("dokoro_context_log", event={f"k{i}": i for i in range(101)})

    assert "event: Value error, is 200012 characters of JSON; keep it under 100000" in too_big
    assert "event: Dictionary should have at most 100 items" in too_many
