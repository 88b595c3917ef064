"""The Core table of a mapped model, typed: SQLModel's classes carry ``__table__`` at run time but
their stubs do not declare it, so this is the one place that says what it is."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table
from sqlmodel import SQLModel

__all__ = ["table_of"]


def table_of(model: type[SQLModel]) -> Table:
    """``model.__table__`` (a table model's Core table)."""
    return cast(Table, model.__table__)  # type: ignore[attr-defined]  # set by SQLModel's metaclass
