"""Bounded argument types, shared by every server's tools, so clients see the bounds.

Every string and integer argument of a dokoro tool uses one of these (a test walks every tool's
input schema and fails on an unbounded one). They carry only the bound; a tool adds its own
``Field(description=…)`` around them, e.g. ``Annotated[Query | None, Field(description="…")]``.

Strings are bounded by what they hold (an id, a title, a note, a body, a query, a path);
integers fit a 32-bit signed column (``INTEGER`` on PostgreSQL), and counters are bounded far
below so the database can sum them (:mod:`dokoro_store.limits`). A NUL or a lone UTF-16
surrogate is refused in any string by the registration's argument check; paths also say so in
their schema.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from dokoro_store import MAX_COUNT, MAX_INT32, MAX_TOKEN_COUNT
from pydantic import AfterValidator, Field

__all__ = [
    "MAX_BODY",
    "Count",
    "Days",
    "Index",
    "IsoDate",
    "Key",
    "Keys",
    "Line",
    "Lines",
    "Mapping",
    "Milliseconds",
    "Note",
    "PathOrData",
    "PathText",
    "Paths",
    "Query",
    "RowId",
    "Steps",
    "Text",
    "Title",
    "TokenCount",
    "Version",
]

# The longest body (a memory, a document, a log entry): a megabyte of text.
MAX_BODY = 1_000_000
# A mapping argument (tags, metadata) as JSON.
MAX_MAPPING = 100_000

# An id or a name: an agent, a session, a model, a block key, a tool.
Key = Annotated[str, Field(max_length=200)]
# An ISO-8601 date or timestamp.
IsoDate = Annotated[str, Field(max_length=64)]
# One line: a title, a task, a topic, a reason.
Title = Annotated[str, Field(max_length=1_000)]
# One step: a plan item, a note on it, a blocker.
Line = Annotated[str, Field(max_length=2_000)]
# A few paragraphs: a question, an answer, notes, a description, a context.
Note = Annotated[str, Field(max_length=20_000)]
# A search query.
Query = Annotated[str, Field(max_length=10_000)]
# A body: what is remembered, logged, indexed or written.
Text = Annotated[str, Field(max_length=MAX_BODY)]
# A file-system path or a URL; never a NUL (also refused for every string argument).
PathText = Annotated[str, Field(max_length=4_096, pattern=r"^[^\x00]*$")]

# A file path or inline data (base64 or a data URL) of up to 10 MB.
PathOrData = Annotated[str, Field(max_length=14_000_000)]

# Lists of the above.
Keys = Annotated[list[Key], Field(max_length=100)]
Lines = Annotated[list[Note], Field(max_length=1_000)]
Steps = Annotated[list[Line], Field(max_length=1_000)]
Paths = Annotated[list[PathText], Field(max_length=1_000)]


def _small_json(value: dict[str, Any]) -> dict[str, Any]:
    size = len(json.dumps(value, default=str))
    if size > MAX_MAPPING:
        raise ValueError(f"is {size} characters of JSON; keep it under {MAX_MAPPING}")
    return value


# Free-form tags or metadata: at most 100 keys and 100,000 characters of JSON.
Mapping = Annotated[dict[str, Any], Field(max_length=100), AfterValidator(_small_json)]

# Integers.
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
TokenCount = Annotated[int, Field(ge=0, le=MAX_TOKEN_COUNT)]
Milliseconds = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Days = Annotated[int, Field(ge=0, le=36_500)]
Index = Annotated[int, Field(ge=0, le=100_000)]
RowId = Annotated[int, Field(ge=1, le=MAX_INT32)]
Version = Annotated[int, Field(ge=0, le=MAX_INT32)]
