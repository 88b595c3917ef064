"""Chunking as the reference does it: 2,000-token documents whole, else 512-token windows with 128 of overlap."""

from __future__ import annotations

import itertools

from dokoro_store.index.chunking import chunk_text, estimate_tokens


def long_doc(lines: int = 400) -> str:
    body = []
    for i in range(lines):
        if i % 50 == 0:
            body.append(f"## Section {i // 50}")
        body.append(f"line {i:04d} " + "word " * 6)
    return "\n".join(body) + "\n"


def test_a_document_of_at_most_2000_tokens_is_one_chunk_with_its_heading():
    text = "# Title\n\nshort body\nsecond line"

    (chunk,) = chunk_text(text, "fallback")

    assert chunk.text == text
    assert (chunk.start_line, chunk.end_line, chunk.start_char, chunk.end_char) == (1, 4, 0, len(text))
    assert chunk.header_context == "Title"
    assert chunk.token_count == estimate_tokens(text)


def test_an_empty_document_has_no_chunk():
    assert chunk_text("   \n") == []


def test_without_a_heading_the_title_is_the_context():
    (chunk,) = chunk_text("plain text", "My title")

    assert chunk.header_context == "My title"


def test_a_long_document_is_cut_into_line_aligned_windows_that_overlap():
    text = long_doc()
    assert estimate_tokens(text) > 2000

    chunks = chunk_text(text)

    assert len(chunks) > 3
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(text.splitlines())
    for chunk in chunks:
        assert chunk.end_char - chunk.start_char <= 512 * 4
        assert text[chunk.start_char : chunk.end_char] == chunk.text
        assert chunk.text.endswith("\n")
    for before, after in itertools.pairwise(chunks):
        overlap = before.end_char - after.start_char
        assert 0 < overlap <= 128 * 4  # some overlap, never more than 128 tokens
        assert after.start_line > before.start_line  # never rewinds to the previous window's first line
        assert after.start_line <= before.end_line


def test_each_window_knows_the_heading_it_sits_under():
    chunks = chunk_text(long_doc())

    assert chunks[0].header_context == "Section 0"
    assert chunks[-1].header_context == "Section 7"


def test_a_line_longer_than_the_window_is_still_taken_whole():
    text = "x" * 9000 + "\nshort\n"

    chunks = chunk_text(text)

    assert chunks[0].text.startswith("x" * 9000)
    assert chunks[-1].text.endswith("short\n")
