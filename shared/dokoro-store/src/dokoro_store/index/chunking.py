"""Cutting a document into chunks for embedding (reference §4.5).

Tokens are estimated as ``ceil(chars / 4)``. A document of at most :data:`SINGLE_CHUNK_TOKENS`
is one chunk. A longer one is cut into line-aligned windows of at most
:data:`WINDOW_TOKENS` (the first line of a window is always taken, however long), each window
after the first starting up to :data:`OVERLAP_TOKENS` earlier, on a line boundary, but never at
the previous window's first line. Each chunk knows its 1-based lines, character offsets and
the markdown heading it sits under.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["OVERLAP_TOKENS", "SINGLE_CHUNK_TOKENS", "WINDOW_TOKENS", "Chunk", "chunk_text", "estimate_tokens"]

SINGLE_CHUNK_TOKENS = 2_000
WINDOW_TOKENS = 512
OVERLAP_TOKENS = 128
CHARS_PER_TOKEN = 4

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    start_line: int  # 1-based, inclusive
    end_line: int
    start_char: int
    end_char: int  # exclusive
    header_context: str | None
    token_count: int


def _headings(lines: list[str]) -> list[str | None]:
    """For each line, the last heading at or before it."""
    current: str | None = None
    out: list[str | None] = []
    in_fence = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence:
            match = _HEADING.match(stripped)
            if match:
                current = match.group(1)
        out.append(current)
    return out


def chunk_text(text: str, title: str | None = None) -> list[Chunk]:
    """The chunks of ``text``; an empty text has none."""
    if not text.strip():
        return []
    lines = text.splitlines(keepends=True)
    heads = _headings(lines)
    first_heading = next((h for h in heads if h), None)

    def header(line_index: int) -> str | None:
        return heads[line_index] or first_heading or title

    if estimate_tokens(text) <= SINGLE_CHUNK_TOKENS:
        return [Chunk(0, text, 1, len(lines), 0, len(text), header(0), estimate_tokens(text))]

    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    budget = WINDOW_TOKENS * CHARS_PER_TOKEN
    overlap = OVERLAP_TOKENS * CHARS_PER_TOKEN
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        end = start + 1  # the first line is always taken
        while end < len(lines) and offsets[end + 1] - offsets[start] <= budget:
            end += 1
        body = text[offsets[start] : offsets[end]]
        if end < len(lines) and not body.endswith("\n"):
            body += "\n"
        chunks.append(
            Chunk(
                index=len(chunks),
                text=body,
                start_line=start + 1,
                end_line=end,
                start_char=offsets[start],
                end_char=offsets[end],
                header_context=header(start),
                token_count=estimate_tokens(body),
            )
        )
        if end >= len(lines):
            break
        # Rewind whole lines worth at most the overlap, but never back to this window's first line.
        next_start = end
        while next_start - 1 > start and offsets[end] - offsets[next_start - 1] <= overlap:
            next_start -= 1
        start = next_start
    return chunks
