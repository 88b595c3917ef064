"""Floats the API rounds: full precision in Python, a fixed number of decimals on the wire."""

from __future__ import annotations

from pydantic import PlainSerializer

__all__ = ["rounded"]


def rounded(digits: int) -> PlainSerializer:
    """Annotate a float field with ``Annotated[float, rounded(4)]``: JSON carries it rounded to
    ``digits`` decimals, while Python code (the text a tool renders, ranking) keeps every digit."""

    def serialise(value: float) -> float:
        return round(value, digits)

    return PlainSerializer(serialise, return_type=float, when_used="json")
