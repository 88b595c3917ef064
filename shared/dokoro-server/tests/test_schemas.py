"""Output schemas a client checks cheaply: inlined, and accepting exactly what the model's does."""

from __future__ import annotations

from typing import Any

import pytest
from dokoro_server.schemas import lean_schema
from dokoro_store.results.episodic import EpisodeRecall
from jsonschema.validators import validator_for
from pydantic import BaseModel, TypeAdapter


class _Node(BaseModel):
    name: str
    children: list[_Node] = []


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(validator_for(schema)(schema).is_valid(value))


EPISODE = {
    "id": 1,
    "session_id": None,
    "ai_model": "m",
    "summary": "s",
    "started_at": "2026-01-01T00:00:00Z",
    "message_count": None,
    "token_count": 3,
    "key_decisions": [],
    "key_topics": ["t"],
    "compacted": False,
}


@pytest.mark.parametrize(
    "value",
    [
        {"ranking": "recency", "episodes": [EPISODE]},
        {"ranking": "recency", "episodes": [{**EPISODE, "session_id": 7}]},  # wrong type inside an item
        {"ranking": "recency", "episodes": [{**EPISODE, "token_count": "3"}]},
        {"ranking": "recency", "episodes": [{k: v for k, v in EPISODE.items() if k != "summary"}]},
        {"episodes": []},
    ],
)
def test_the_lean_schema_accepts_exactly_what_the_models_schema_accepts(value: dict[str, Any]) -> None:
    schema = TypeAdapter(EpisodeRecall).json_schema()
    lean = lean_schema(schema)

    assert lean is not None and "$defs" not in lean and "$ref" not in str(lean) and "anyOf" not in str(lean)
    assert _valid(lean, value) == _valid(schema, value)


def test_a_recursive_model_keeps_its_references() -> None:
    schema = TypeAdapter(_Node).json_schema()
    if "$defs" not in schema:  # pydantic may put the root itself under $defs or not: either way nothing to inline
        assert lean_schema(schema) == schema
        return
    assert lean_schema(schema) is schema
