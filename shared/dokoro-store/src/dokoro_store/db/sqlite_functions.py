"""SQL functions some SQLite builds lack, registered on each connection that needs them.

``power()`` is part of SQLite's math functions, which are compiled in only when the library was
built with ``SQLITE_ENABLE_MATH_FUNCTIONS`` (3.35+). Where it is missing, a deterministic Python
version is registered under the same name, so queries read the same on every build.
"""

from __future__ import annotations

import math
import sqlite3

__all__ = ["install_math_functions", "sql_power"]


def sql_power(base: float | None, exponent: float | None) -> float | None:
    """SQLite's ``power(x, y)``: NULL in, NULL out; NULL where the result is not a real number."""
    if base is None or exponent is None:
        return None
    try:
        value = math.pow(float(base), float(exponent))
    except (ValueError, OverflowError):
        return None
    return value


def _has_power(connection: sqlite3.Connection) -> bool:
    try:
        connection.execute("SELECT power(2.0, 3.0)").fetchone()
    except sqlite3.OperationalError:
        return False
    return True


def install_math_functions(connection: sqlite3.Connection, *, force: bool = False) -> bool:
    """Register ``power`` when the build lacks it (or always, with ``force``); True if registered."""
    if not force and _has_power(connection):
        return False
    connection.create_function("power", 2, sql_power, deterministic=True)
    return True
