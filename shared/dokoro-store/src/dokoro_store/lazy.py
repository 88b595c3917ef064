"""``@lazy``: an attribute built on first use, once, even when two threads ask at the same moment.

:class:`~dokoro_store.store.Store` builds the layers a process rarely needs this way, so a command
that reads the rules does not import analytics. Unlike :func:`functools.cached_property` (which has
no lock since Python 3.12) two threads never build two instances of a service that holds state.
The lock is the object's own (two stores of one process never wait on each other's building).
Assigning the attribute (a test's stand-in) replaces it, as with a plain attribute.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

__all__ = ["built", "lazy"]

T = TypeVar("T")

_LOCK_NAME = "_lazy_lock"  # the object's own lock, in its __dict__ (re-entrant: a layer built may build those it needs)


class lazy(Generic[T]):
    def __init__(self, build: Callable[[Any], T]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> lazy[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> T | lazy[T]:
        if obj is None:
            return self
        values = obj.__dict__
        try:
            return values[self._name]  # type: ignore[no-any-return]
        except KeyError:
            pass
        lock = values.get(_LOCK_NAME)
        if lock is None:
            lock = values.setdefault(_LOCK_NAME, threading.RLock())  # one wins, atomically
        with lock:
            if self._name not in values:
                values[self._name] = self._build(obj)
            return values[self._name]  # type: ignore[no-any-return]


def built(obj: object, name: str) -> bool:
    """Whether the lazy attribute ``name`` of ``obj`` has been built (or assigned)."""
    return name in obj.__dict__
