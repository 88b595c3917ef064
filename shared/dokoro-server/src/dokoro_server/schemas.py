"""Output schemas a client checks cheaply.

A client checks every structured result against the tool's output schema (the Python SDK's client
compiles a ``jsonschema`` validator per tool and runs it on each answer). pydantic writes a nested
model as a ``$ref`` into ``$defs``, and resolving a reference costs the validator far more than
checking the value: ``dokoro_session_recall``'s five episodes took 8.7 ms a call under references
and 0.1-0.2 ms inlined (``bench/floor.py``, "schema checks"; docs/benchmarks.md). So the published
schema is the same schema with every reference replaced by what it names (a recursive model keeps
its references: it cannot be inlined), and ``anyOf`` of bare types (``X | None``) said as one
``type`` list. What the schema accepts is unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["lean_schema"]

_PREFIX = "#/$defs/"


def lean_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """``schema`` with its ``$defs`` inlined and simple ``anyOf`` unions folded (a new object); the
    schema itself when a definition refers to itself, directly or not."""
    if schema is None:
        return None
    definitions: dict[str, Any] = schema.get("$defs", {})
    if _recursive(definitions):
        return schema
    lean: dict[str, Any] = _inline({key: value for key, value in schema.items() if key != "$defs"}, definitions)
    return lean


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith(_PREFIX) and reference[len(_PREFIX) :] in definitions:
        target = copy.deepcopy(definitions[reference[len(_PREFIX) :]])
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return _inline({**target, **siblings}, definitions)
    folded = {key: _inline(value, definitions) for key, value in node.items()}
    union = folded.get("anyOf")
    if isinstance(union, list) and union and all(_bare_type(arm) for arm in union) and "type" not in folded:
        types: list[str] = []
        for arm in union:
            for kind in arm["type"] if isinstance(arm["type"], list) else [arm["type"]]:
                if kind not in types:
                    types.append(kind)
        folded.pop("anyOf")
        folded["type"] = types if len(types) > 1 else types[0]
    return folded


def _bare_type(arm: Any) -> bool:
    """``{"type": ...}`` and nothing else (no bound, format or nested schema to keep apart)."""
    return isinstance(arm, dict) and set(arm) == {"type"}


def _recursive(definitions: dict[str, Any]) -> bool:
    def refs(node: Any) -> set[str]:
        if isinstance(node, list):
            return set().union(*(refs(item) for item in node)) if node else set()
        if not isinstance(node, dict):
            return set()
        found = set().union(*(refs(value) for value in node.values())) if node else set()
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(_PREFIX):
            found.add(reference[len(_PREFIX) :])
        return found

    edges = {name: refs(body) for name, body in definitions.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for step in edges.get(start, ()):
            if step == goal or (step not in seen and reaches(step, goal, seen | {step})):
                return True
        return False

    return any(reaches(name, name, {name}) for name in edges)
