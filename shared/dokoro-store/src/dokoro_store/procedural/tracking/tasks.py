"""Task timers (reference §4.11 ``dokoro_task_track`` / ``dokoro_task_list``), per agent, in the database.

The original kept one ``session.json`` per workspace, so two agents' tasks shared one file and one
clock. Here each task is a row owned by one agent, every instant is the database clock (read
inside the transaction that writes it), and each change locks that agent's tasks (``BEGIN
IMMEDIATE`` on SQLite, an advisory key lock on PostgreSQL), so agents never see or stop each
other's timers and their durations never mix.

Time accounting: a running task accumulates ``active_seconds`` span by span (``resumed_at`` marks
the open span); a pause accumulates ``pause_seconds`` from its start to the resume (§7.14: the
original recorded the pause's end at pause time, so manual pauses never counted).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from dokoro_store.clock import iso, parse_iso
from dokoro_store.db.clock import db_now
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import TaskTimer
from dokoro_store.procedural.tracking.rules import clean_text, clean_texts
from dokoro_store.results.tracking import PauseView, TaskView
from dokoro_store.walls.names import required_name

__all__ = ["ACTIONS", "TaskChange", "TaskService", "task_view"]

ACTIONS = ("start", "pause", "resume", "iterate", "complete", "abandon")
_LOCK = "task_timer"


@dataclass(frozen=True)
class TaskChange:
    task: TaskTimer
    auto_paused: TaskTimer | None
    at: datetime
    redacted: tuple[str, ...] = ()


def _seconds(task: TaskTimer, at: datetime) -> tuple[float, float]:
    """(active, paused) seconds of ``task`` at ``at``, open span or pause included."""
    active, paused = task.active_seconds, task.pause_seconds
    if task.status == "active" and task.resumed_at is not None:
        active += max(0.0, (at - task.resumed_at).total_seconds())
    if task.status == "paused" and task.paused_at is not None:
        paused += max(0.0, (at - task.paused_at).total_seconds())
    return active, paused


def task_view(task: TaskTimer, at: datetime) -> TaskView:
    active, paused = _seconds(task, at)
    pauses = []
    for pause in task.pauses:
        start = parse_iso(str(pause["start"]))
        end = parse_iso(str(pause["end"])) if pause.get("end") else None
        pauses.append(
            PauseView(
                start=start,
                end=end,
                reason=str(pause.get("reason") or "manual_pause"),
                seconds=round((end - start).total_seconds(), 3) if end else None,
            )
        )
    return TaskView(
        id=task.id,
        agent_id=task.agent_id,
        title=task.title,
        status=task.status,
        iterations=task.iterations,
        started_at=task.started_at,
        ended_at=task.ended_at,
        active_seconds=round(active, 3),
        pause_seconds=round(paused, 3),
        duration_minutes=round(active / 60),
        pauses=pauses,
    )


def _stamp(moment: datetime) -> str:
    # Sub-second precision: pauses can be shorter than a second, and their sum must add up.
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class TaskService:
    def __init__(self, db: Database) -> None:
        self._db = db

    def now(self) -> datetime:
        """The database clock."""
        with self._db.read() as session:
            return db_now(session, self._db.ops)

    def _mine(self, session: Session, agent_id: str, statuses: Sequence[str]) -> list[TaskTimer]:
        return list(
            session.exec(
                select(TaskTimer)
                .where(col(TaskTimer.agent_id) == agent_id, col(TaskTimer.status).in_(list(statuses)))
                .order_by(col(TaskTimer.started_at), col(TaskTimer.id))
                .with_for_update()
            )
        )

    def _pick(
        self, session: Session, agent_id: str, task_id: str | None, statuses: Sequence[str], verb: str
    ) -> TaskTimer:
        if task_id:
            row = session.get(TaskTimer, task_id.strip(), with_for_update=True)
            if row is None or row.agent_id != agent_id:
                raise NotFoundError(
                    f"You have no task {task_id!r} (tasks belong to the agent that started them); "
                    "see yours with dokoro_task_list"
                )
            if row.status not in statuses:
                raise InvalidArgumentError(
                    f"task {row.id} is {row.status}; {verb} needs a task that is {' or '.join(statuses)}"
                )
            return row
        rows = self._mine(session, agent_id, statuses)
        if not rows:
            have = {"active": "no active task", "paused": "no paused task"}
            missing = " and ".join(have.get(s, s) for s in statuses)
            raise InvalidArgumentError(
                f"{verb}: you have {missing}. Start one with action='start' and a title (dokoro_task_list shows yours)."
            )
        # resume takes the first paused task (as the reference); the others act on the running one
        return rows[0] if verb == "resume" else rows[-1]

    def track(
        self,
        action: str,
        agent_id: str,
        *,
        title: str | None = None,
        reason: str | None = None,
        task_id: str | None = None,
    ) -> TaskChange:
        """start | pause | resume | iterate | complete | abandon one of ``agent_id``'s tasks."""
        if action not in ACTIONS:
            raise InvalidArgumentError(f"action must be one of {', '.join(ACTIONS)}; got {action!r}")
        agent_id = required_name(agent_id, "agent_id")
        clean_reason = clean_text(reason, "reason", limit=500)
        clean_title = clean_text(title, "title", limit=300)
        if action == "start" and clean_title is None:
            raise InvalidArgumentError("action='start' needs a title: what are you starting?")
        (safe_title, safe_reason), kinds = clean_texts(clean_title, clean_reason)
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK, [agent_id])
            at = db_now(session, self._db.ops)
            auto: TaskTimer | None = None
            if action == "start":
                assert safe_title is not None
                for running in self._mine(session, agent_id, ("active",)):
                    self._pause(running, at, f"switched to: {safe_title}")
                    session.add(running)
                    auto = running
                task = TaskTimer(
                    id=f"task-{int(at.timestamp() * 1000)}-{secrets.token_hex(2)}",
                    agent_id=agent_id,
                    title=safe_title,
                    status="active",
                    iterations=1,
                    started_at=at,
                    resumed_at=at,
                    pauses=[],
                    updated_at=at,
                )
            elif action == "pause":
                task = self._pick(session, agent_id, task_id, ("active",), "pause")
                self._pause(task, at, safe_reason or "manual_pause")
            elif action == "resume":
                task = self._pick(session, agent_id, task_id, ("paused",), "resume")
                for running in self._mine(session, agent_id, ("active",)):
                    self._pause(running, at, f"switched to: {task.title}")
                    session.add(running)
                    auto = running
                self._resume(task, at)
            elif action == "iterate":
                task = self._pick(session, agent_id, task_id, ("active", "paused"), "iterate")
                task.iterations += 1
            else:  # complete | abandon
                task = self._pick(session, agent_id, task_id, ("active", "paused"), action)
                self._close(task, at, "completed" if action == "complete" else "abandoned")
            task.updated_at = at
            session.add(task)
        return TaskChange(task, auto, at, kinds)

    @staticmethod
    def _pause(task: TaskTimer, at: datetime, reason: str) -> None:
        if task.resumed_at is not None:
            task.active_seconds += max(0.0, (at - task.resumed_at).total_seconds())
        task.resumed_at = None
        task.paused_at = at
        task.status = "paused"
        task.pauses = [*task.pauses, {"start": _stamp(at), "end": None, "reason": reason}]
        task.updated_at = at

    @staticmethod
    def _close_pause(task: TaskTimer, at: datetime) -> None:
        if task.paused_at is not None:
            task.pause_seconds += max(0.0, (at - task.paused_at).total_seconds())
        task.paused_at = None
        pauses: list[dict[str, Any]] = [dict(p) for p in task.pauses]
        for pause in pauses:
            if not pause.get("end"):
                pause["end"] = _stamp(at)
        task.pauses = pauses

    def _resume(self, task: TaskTimer, at: datetime) -> None:
        self._close_pause(task, at)
        task.status = "active"
        task.resumed_at = at

    def _close(self, task: TaskTimer, at: datetime, status: str) -> None:
        if task.status == "active" and task.resumed_at is not None:
            task.active_seconds += max(0.0, (at - task.resumed_at).total_seconds())
        if task.status == "paused":
            self._close_pause(task, at)
        task.resumed_at = None
        task.status = status
        task.ended_at = at

    # ------------------------------------------------------------------ reads
    def of_agent(self, agent_id: str) -> tuple[list[TaskTimer], datetime]:
        """Every task of ``agent_id`` (oldest first) and the database clock."""
        agent_id = required_name(agent_id, "agent_id")
        with self._db.read() as session:
            at = db_now(session, self._db.ops)
            rows = list(
                session.exec(
                    select(TaskTimer)
                    .where(col(TaskTimer.agent_id) == agent_id)
                    .order_by(col(TaskTimer.started_at), col(TaskTimer.id))
                )
            )
        return rows, at

    def between(self, start: datetime, end: datetime) -> tuple[list[TaskTimer], datetime]:
        """Tasks of every agent started in [start, end), and the database clock."""
        with self._db.read() as session:
            at = db_now(session, self._db.ops)
            rows = list(
                session.exec(
                    select(TaskTimer)
                    .where(col(TaskTimer.started_at) >= start, col(TaskTimer.started_at) < end)
                    .order_by(col(TaskTimer.started_at))
                )
            )
        return rows, at

    def open_tasks(self) -> tuple[list[TaskTimer], datetime]:
        """Active and paused tasks of every agent, and the database clock."""
        with self._db.read() as session:
            at = db_now(session, self._db.ops)
            rows = list(session.exec(select(TaskTimer).where(col(TaskTimer.status).in_(["active", "paused"]))))
        return rows, at


def describe(task: TaskTimer) -> str:
    return f"{task.title} ({task.id}, started {iso(task.started_at)})"
