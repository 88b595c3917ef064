"""A plan as the store reads it: rows folded into a :class:`PlanView` (reference §2.5).

The view carries everything the store needs (item creation times for the report, the archive
time for the status card) and renders the reference's plan JSON for the mirrors;
:meth:`PlanView.result` gives the public :class:`~dokoro_store.results.plans.Plan`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from dokoro_store.clock import iso
from dokoro_store.models import Plan as PlanRow
from dokoro_store.models import PlanItem as PlanItemRow
from dokoro_store.results.plans import Plan

__all__ = ["PlanItemView", "PlanView", "completion_percentage", "items_of", "view_of"]


def completion_percentage(done: int, total: int) -> int:
    """round(100 × done / total), halves rounded up as the reference does; 0 for an empty plan."""
    if total <= 0:
        return 0
    return math.floor(100 * done / total + 0.5)


@dataclass(frozen=True)
class PlanItemView:
    index: int  # 1-based, as the agent speaks
    text: str
    completed: bool
    created_at: datetime
    completed_at: datetime | None
    notes: str | None
    blockers: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": f"item-{self.index - 1}",
            "text": self.text,
            "completed": self.completed,
            "created_at": iso(self.created_at),
        }
        if self.completed_at is not None:
            data["completed_at"] = iso(self.completed_at)
        if self.notes:
            data["notes"] = self.notes
        if self.blockers:
            data["blockers"] = list(self.blockers)
        return data


@dataclass(frozen=True)
class PlanView:
    id: str
    title: str
    description: str | None
    status: str
    items: tuple[PlanItemView, ...]
    created_at: datetime
    updated_at: datetime
    validated_at: datetime | None
    validation_notes: str | None
    archived_at: datetime | None
    archive_path: str | None
    agent_id: str | None
    shared: bool = True

    @property
    def archived(self) -> bool:
        return self.archive_path is not None

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def done(self) -> int:
        return sum(1 for item in self.items if item.completed)

    @property
    def completion(self) -> int:
        return completion_percentage(self.done, self.total)

    def result(self) -> Plan:
        """The public plan (the view's fields a tool returns)."""
        return Plan.model_validate(self, from_attributes=True)

    def to_json(self) -> dict[str, Any]:
        """The reference's plan JSON (plus the archive fields once archived)."""
        data: dict[str, Any] = {"id": self.id, "title": self.title}
        if self.description:
            data["description"] = self.description
        data["items"] = [item.to_json() for item in self.items]
        data["created_at"] = iso(self.created_at)
        data["updated_at"] = iso(self.updated_at)
        if self.validated_at is not None:
            data["validated_at"] = iso(self.validated_at)
        if self.validation_notes:
            data["validation_notes"] = self.validation_notes
        data["status"] = self.status
        data["completion_percentage"] = self.completion
        if self.archived:
            data["archived"] = True
            data["archived_at"] = iso(self.archived_at) if self.archived_at else None
            data["archive_path"] = self.archive_path
        return data


def view_of(row: PlanRow, items: Sequence[PlanItemRow]) -> PlanView:
    return PlanView(
        id=row.id,
        title=row.title,
        description=row.description,
        status=row.status,
        items=tuple(
            PlanItemView(
                index=item.position + 1,
                text=item.text,
                completed=item.completed,
                created_at=item.created_at,
                completed_at=item.completed_at,
                notes=item.notes,
                blockers=tuple(item.blockers or ()),
            )
            for item in sorted(items, key=lambda i: i.position)
        ),
        created_at=row.created_at,
        updated_at=row.updated_at,
        validated_at=row.validated_at,
        validation_notes=row.validation_notes,
        archived_at=row.archived_at,
        archive_path=row.archive_path,
        agent_id=row.agent_id,
        shared=row.shared,
    )


def items_of(session: Session, plan_id: str) -> list[PlanItemRow]:
    statement = select(PlanItemRow).where(PlanItemRow.plan_id == plan_id).order_by(col(PlanItemRow.position))
    return list(session.exec(statement))
