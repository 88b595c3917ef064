"""The database's last line of defence against secrets: every string a write statement carries.

:func:`install` hooks an engine so that every ``INSERT`` and ``UPDATE`` it sends (ORM flushes,
Core statements, raw SQL, bulk ``executemany``, imports and migrations alike) has each string
parameter passed through :func:`dokoro_store.walls.secrets.redact` first, and the store's own session
factories so that their ORM flushes redact the objects too. Nothing else in the process is
touched: another library's SQLAlchemy sessions and engines keep their own behaviour. A service that forgets to
redact, or a tool added tomorrow, cannot store a credential: the rule lives below every service.

JSON parameters are redacted value by value (a serialised JSON string is parsed and dumped again
only when it held a secret; PostgreSQL's JSON wrappers are rebuilt around the cleaned object), so
the stored document stays valid JSON. Bytes (vectors) and numbers pass untouched. Statements that
only read or delete are not touched, so a lookup by a value is never altered.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sqlalchemy import Engine, event, inspect
from sqlalchemy.orm import Session, sessionmaker

from dokoro_store.walls.secrets import redact, redact_value

__all__ = ["install", "redact_parameter"]

_WRITE = re.compile(r"\s*(?:INSERT|UPDATE|REPLACE|MERGE)\b", re.IGNORECASE)


def redact_parameter(value: Any) -> Any:
    """``value`` with every secret in it replaced (the same object when it held none)."""
    if isinstance(value, str):
        if not value:
            return value
        if value[0] in "{[":
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            else:
                cleaned, kinds = redact_value(parsed)
                return json.dumps(cleaned) if kinds else value
        result = redact(value)
        return result.text if result.kinds else value
    obj = getattr(value, "obj", None)
    if obj is not None and type(value).__module__.startswith("psycopg"):
        # psycopg's Json/Jsonb wrap the object SQLAlchemy will dump; rebuild the wrapper around a clean one.
        cleaned, kinds = redact_value(obj)
        if kinds:
            return type(value)(cleaned, getattr(value, "dumps", None))
    return value


def _redact_set(params: Any) -> Any:
    if isinstance(params, dict):
        cleaned = {key: redact_parameter(value) for key, value in params.items()}
        return cleaned if any(cleaned[k] is not params[k] for k in params) else params
    if isinstance(params, list | tuple):
        items = [redact_parameter(value) for value in params]
        if all(a is b for a, b in zip(items, params, strict=True)):
            return params
        return tuple(items) if isinstance(params, tuple) else items
    return params


def _before_cursor_execute(
    conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
) -> tuple[str, Any]:
    if not parameters or _WRITE.match(statement) is None:
        return statement, parameters
    if executemany:
        batch = [_redact_set(params) for params in parameters]
        if all(a is b for a, b in zip(batch, parameters, strict=True)):
            return statement, parameters
        return statement, batch if isinstance(parameters, list) else type(parameters)(batch)
    return statement, _redact_set(parameters)


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    """Redact the text and JSON attributes of every new or changed ORM object before it is written.

    The statement hook would store the same; doing it on the objects too means what a service
    returns from the row it just wrote (and the tool shows) is what the database holds.
    """
    for obj in [*session.new, *session.dirty]:
        state = inspect(obj)
        mapper = state.mapper
        primary = {column.key for column in mapper.primary_key}
        for attr in mapper.column_attrs:
            if attr.key in primary and not state.pending:
                continue
            value = state.dict.get(attr.key)
            if not isinstance(value, str | dict | list):
                continue  # None, numbers, datetimes, bytes (vectors)
            cleaned, kinds = redact_value(value)
            if kinds:
                setattr(obj, attr.key, cleaned)


def install(engine: Engine, *sessions: sessionmaker[Any]) -> None:
    """Redact every write ``engine`` sends from now on, and every ORM flush of a session the
    factories ``sessions`` make (each hook once)."""
    if not event.contains(engine, "before_cursor_execute", _before_cursor_execute):
        event.listen(engine, "before_cursor_execute", _before_cursor_execute, retval=True)
    for factory in sessions:
        if not event.contains(factory, "before_flush", _before_flush):
            event.listen(factory, "before_flush", _before_flush)
