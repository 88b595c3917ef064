"""Built on first use: ``@lazy`` attributes, and the names a package exports (:func:`lazy_exports`).

``@lazy``: an attribute built on first use, once, even when two threads ask at the same moment.

:class:`~dokoro_store.store.Store` builds the layers a process rarely needs this way, so a command
that reads the rules does not import analytics. Unlike :func:`functools.cached_property` (which has
no lock since Python 3.12) two threads never build two instances of a service that holds state.
The lock is the object's own (two stores of one process never wait on each other's building).
Assigning the attribute (a test's stand-in) replaces it, as with a plain attribute.

:func:`lazy_exports`: the PEP 562 ``__getattr__`` and ``__dir__`` of a package whose names are
imported from their modules when first asked for — the front door (``dokoro_store``), the tables
(``dokoro_store.models``) and the server kit (``dokoro_server``) share this one loader, so importing
a package costs nothing until a name is used. Stdlib only, and imported eagerly by those packages.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, overload

__all__ = ["built", "lazy", "lazy_exports"]

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


def lazy_exports(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` (PEP 562), for its ``__init__``::

        __getattr__, __dir__ = lazy_exports(__name__, {"Store": "store", "split": "walls.frontmatter:split"})

    ``homes`` maps each exported name to the module under ``package`` that defines it, written
    ``"module"`` or ``"module:attribute"`` when it has another name there. A name is imported on
    first use and then kept in the package's namespace (the next use is a plain attribute).
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(f"{package}.{module}"), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(namespace.get("__all__", homes))

    return __getattr__, __dir__
