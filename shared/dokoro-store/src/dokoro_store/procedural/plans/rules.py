"""The rules of a plan kept apart from the service: its statuses and their order, the limits on
its texts, the error an archived plan raises, and what a validation answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dokoro_store.errors import ConflictError, InvalidArgumentError
from dokoro_store.procedural.plans.archive import ArchiveOutcome
from dokoro_store.procedural.plans.views import PlanView
from dokoro_store.results.plans import PlanValidation
from dokoro_store.walls.secrets import redact

PLAN_STATUSES = ("draft", "active", "completed", "validated", "failed")
# The steps a person may take by hand (dokoro browse `p`): draft → active → completed.
NEXT_STATUS = {"draft": "active", "active": "completed"}
LIST_FILTERS = ("all", "active", "completed", "validated")
MAX_ITEMS = 200
MAX_TEXT = 2_000
_TITLE_SLUG_MAX = 40


class PlanArchivedError(ConflictError):
    """The plan is archived: it can be read but no longer changed."""


@dataclass(frozen=True)
class PlanValidated:
    """A validation, with what only its message needs (the report table, the archive outcome)."""

    plan: PlanView
    report_path: Path
    report_relative: str
    table: str
    archive: ArchiveOutcome | None

    def result(self) -> PlanValidation:
        archive = self.archive
        return PlanValidation(
            plan=self.plan.result(),
            report=self.report_relative,
            archived=self.plan.archived,
            archive_path=self.plan.archive_path,
            archive_error=archive.error if archive is not None and not archive.ok else None,
        )


def _title_slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:_TITLE_SLUG_MAX].strip("-")


def _clean(text: str | None, what: str, *, required: bool = False) -> str | None:
    value = (text or "").strip()
    if required and not value:
        raise InvalidArgumentError(f"{what} must not be empty")
    if len(value) > MAX_TEXT:
        raise InvalidArgumentError(f"{what} is {len(value)} characters; keep it under {MAX_TEXT}")
    return redact(value).text or None


def others_plans(plans: list[PlanView], action: str, agent: str | None) -> str:
    """Why an agent's default target is none of ``plans`` (live, in the right status, newest first,
    each another agent's and not shared): whose they are, and what the agent may do instead."""
    newest = plans[0]
    more = f" (and {len(plans) - 1} more of other agents)" if len(plans) > 1 else ""
    return (
        f"No {newest.status} plan of yours to {action}: the {newest.status} plan is {newest.title!r} "
        f"({newest.id}), by {newest.agent_id}, not shared{more}. You ({agent}) may read it (dokoro_plan_status) "
        f"and add blockers (dokoro_plan_blocker), not {action} it: ask {newest.agent_id} to {action} it, "
        "work on a plan created with shared=true (pass its planId), or create your own with dokoro_plan_create."
    )
