"""Questions of the working memory, stored in the database so every agent of a store sees them."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import Table, func
from sqlalchemy import select as core_select
from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import Question as QuestionRow
from dokoro_store.results.working import BlockerCheck, Question, QuestionAdded, QuestionAnswered, QuestionCounts
from dokoro_store.walls.secrets import redact, redact_all
from dokoro_store.working.current.file import CurrentFile

__all__ = ["PRIORITIES", "QuestionService"]

PRIORITIES = ("low", "medium", "high", "blocker")
_PRIORITY_RANK = {"blocker": 0, "high": 1, "medium": 2, "low": 3}
_ICONS = {"blocker": "🚨", "high": "❗", "medium": "❓", "low": "❓"}
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, rest = divmod(number, 36)
        digits = _BASE36[rest] + digits
        if number == 0:
            return digits


def _public(row: QuestionRow | Any) -> Question:
    """The result of a question: its ORM row or a Core row of ``questions``."""
    return Question.model_validate(row, from_attributes=True)


def _read_statements() -> tuple[dict[str, Any], Any]:
    """The cheap reads' Core statements, built once (statements are immutable): the questions of
    each status filter, and the open questions counted by priority."""
    table: Table = table_of(QuestionRow)
    listed = {
        "all": core_select(table),
        "open": core_select(table).where(table.c.status == "open"),
        "answered": core_select(table).where(table.c.status == "answered"),
    }
    counts = core_select(table.c.priority, func.count()).where(table.c.status == "open").group_by(table.c.priority)
    return listed, counts


_LISTED, _COUNTS = _read_statements()


class QuestionService:
    """Open questions shared by every agent of the store; each add and answer is logged to current.md."""

    def __init__(self, db: Database, clock: Clock, current: CurrentFile) -> None:
        self._db = db
        self._clock = clock
        self._current = current

    def counts(self) -> QuestionCounts:
        # A cached Core statement in one short read transaction (no ORM session): counted in SQL.
        with self._db.reading() as connection:
            rows = connection.execute(_COUNTS).all()
        ranked = sorted(rows, key=lambda row: _PRIORITY_RANK.get(row[0], 9))
        by_priority = {str(priority): int(count) for priority, count in ranked}
        return QuestionCounts(
            open=sum(by_priority.values()), blockers=by_priority.get("blocker", 0), by_priority=by_priority
        )

    def add(
        self, question: str, *, context: str | None = None, priority: str = "medium", agent_id: str | None = None
    ) -> QuestionAdded:
        question = question.strip()
        if not question:
            raise InvalidArgumentError("question must not be empty")
        if priority not in PRIORITIES:
            raise InvalidArgumentError(f"priority must be one of {', '.join(PRIORITIES)}; got {priority!r}")
        now = self._clock.now()
        (question_clean, context_clean), _kinds = redact_all([question, (context or "").strip() or None])
        question, context = str(question_clean), context_clean
        row = QuestionRow(
            id=f"q-{_base36(int(now.timestamp() * 1000))}-{''.join(secrets.choice(_BASE36) for _ in range(4))}",
            question=question,
            context=(context or "").strip() or None,
            priority=priority,
            status="open",
            created_at=now,
            agent_id=agent_id,
        )
        with self._db.write() as session:
            session.add(row)
            added = _public(row)
        suffix = f" (Context: {added.context})" if added.context else ""
        self._current.log_line(_ICONS[priority], f"QUESTION: {question}{suffix}", agent=agent_id)
        return QuestionAdded(question=added, counts=self.counts())

    def answer(self, answer: str, question_id: str | None = None, *, agent: str | None = None) -> QuestionAnswered:
        """Answer a question (any agent may answer any open one); ``agent`` is who answers."""
        answer = answer.strip()
        if not answer:
            raise InvalidArgumentError("answer must not be empty")
        answer = redact(answer).text
        now = self._clock.now()
        # Row locks (FOR UPDATE) make two agents answering at once on PostgreSQL take turns: the
        # second sees the first answer and is refused instead of overwriting it. SQLite's
        # BEGIN IMMEDIATE already serialises the transaction.
        with self._db.write() as session:
            if question_id:
                row = session.get(QuestionRow, question_id.strip(), with_for_update=True)
                if row is None:
                    raise NotFoundError(
                        f"No question with ID {question_id!r}. List ids with dokoro_question_list (status='all')."
                    )
                if row.status != "open":
                    raise InvalidArgumentError(f"Question {row.id} is already answered: {row.answer}")
            else:
                row = session.exec(
                    select(QuestionRow)
                    .where(QuestionRow.status == "open")
                    .order_by(col(QuestionRow.created_at).desc(), col(QuestionRow.id).desc())
                    .limit(1)
                    .with_for_update()
                ).first()
                if row is None:
                    raise NotFoundError("No open questions to answer. Add one with dokoro_question_add.")
            row.status = "answered"
            row.answer = answer
            row.answered_at = now
            session.add(row)
            answered = _public(row)
        self._current.log_line("✅", f"ANSWERED: {answered.question}\n   → {answer}", agent=agent)
        return QuestionAnswered(
            question=answered, open_for_seconds=(now - answered.created_at).total_seconds(), counts=self.counts()
        )

    def list(self, status: str = "open") -> list[Question]:
        """Questions sorted open first, then blocker < high < medium < low, then newest."""
        if status not in ("open", "answered", "all"):
            raise InvalidArgumentError(f"status must be 'open', 'answered' or 'all'; got {status!r}")
        # A cached Core statement in one short read transaction (no ORM session or identity map).
        with self._db.reading() as connection:
            rows = [_public(row) for row in connection.execute(_LISTED[status])]
        rows.sort(key=lambda q: q.created_at, reverse=True)
        rows.sort(key=lambda q: (q.status != "open", _PRIORITY_RANK.get(q.priority, 9)))
        return rows

    def check(self) -> BlockerCheck:
        """Are we blocked: the open blocker questions (newest first) and the open counts."""
        blockers = [q for q in self.list("open") if q.priority == "blocker"]
        return BlockerCheck(blocked=bool(blockers), blockers=blockers, counts=self.counts())
