"""Bounds the store keeps on what callers hand it (stdlib only: the server kit publishes them).

Counters land in ``INTEGER`` columns, 32-bit on PostgreSQL, and the database sums them (64-bit):
a value is refused above its bound, and a stored sum (a compacted session's tokens) is clamped
to the column's range, so neither an insert nor a later sum can overflow.
"""

from __future__ import annotations

__all__ = ["MAX_COUNT", "MAX_INT32", "MAX_SUM", "MAX_TOKEN_COUNT"]

# The largest value of a 32-bit ``INTEGER`` column (PostgreSQL), the widest any argument lands in.
MAX_INT32 = 2**31 - 1
# Tokens in one session summary: a billion, far beyond any context window.
MAX_TOKEN_COUNT = 10**9
# Messages, milliseconds and similar counters of one call.
MAX_COUNT = 10**9
# What a stored sum is clamped to.
MAX_SUM = MAX_INT32
