"""Questions of the working memory, stored in the database so every agent of a store sees them."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import Question
from dokoro_store.secrets import redact, redact_all
from dokoro_store.services.workspace import WorkspaceService

__all__ = ["PRIORITIES", "QuestionAnswered", "QuestionCounts", "QuestionService"]

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


@dataclass(frozen=True)
class QuestionCounts:
    open: int
    by_priority: dict[str, int]

    @property
    def blockers(self) -> int:
        return self.by_priority.get("blocker", 0)


@dataclass(frozen=True)
class QuestionAnswered:
    question: Question
    open_for_seconds: float
    remaining: QuestionCounts


class QuestionService:
    def __init__(self, db: Database, clock: Clock, workspace: WorkspaceService) -> None:
        self._db = db
        self._clock = clock
        self._workspace = workspace

    def counts(self) -> QuestionCounts:
        with self._db.read() as session:
            rows = session.exec(select(Question.priority).where(Question.status == "open")).all()
        by_priority: dict[str, int] = {}
        for priority in rows:
            by_priority[priority] = by_priority.get(priority, 0) + 1
        return QuestionCounts(len(rows), by_priority)

    def add(
        self, question: str, *, context: str | None = None, priority: str = "medium", agent_id: str | None = None
    ) -> tuple[Question, QuestionCounts]:
        question = question.strip()
        if not question:
            raise InvalidArgumentError("question must not be empty")
        if priority not in PRIORITIES:
            raise InvalidArgumentError(f"priority must be one of {', '.join(PRIORITIES)}; got {priority!r}")
        now = self._clock.now()
        (question_clean, context_clean), _kinds = redact_all([question, (context or "").strip() or None])
        question, context = str(question_clean), context_clean
        row = Question(
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
        suffix = f" (Context: {row.context})" if row.context else ""
        self._workspace.log_line(_ICONS[priority], f"QUESTION: {question}{suffix}")
        return row, self.counts()

    def answer(self, answer: str, question_id: str | None = None) -> QuestionAnswered:
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
                row = session.get(Question, question_id.strip(), with_for_update=True)
                if row is None:
                    raise NotFoundError(
                        f"No question with ID {question_id!r}. List ids with dokoro_question_list (status='all')."
                    )
                if row.status != "open":
                    raise InvalidArgumentError(f"Question {row.id} is already answered: {row.answer}")
            else:
                row = session.exec(
                    select(Question)
                    .where(Question.status == "open")
                    .order_by(col(Question.created_at).desc(), col(Question.id).desc())
                    .limit(1)
                    .with_for_update()
                ).first()
                if row is None:
                    raise NotFoundError("No open questions to answer. Add one with dokoro_question_add.")
            row.status = "answered"
            row.answer = answer
            row.answered_at = now
            session.add(row)
        self._workspace.log_line("✅", f"ANSWERED: {row.question}\n   → {answer}")
        return QuestionAnswered(row, (now - row.created_at).total_seconds(), self.counts())

    def list(self, status: str = "open") -> list[Question]:
        """Questions sorted open first, then blocker < high < medium < low, then newest."""
        if status not in ("open", "answered", "all"):
            raise InvalidArgumentError(f"status must be 'open', 'answered' or 'all'; got {status!r}")
        statement = select(Question)
        if status != "all":
            statement = statement.where(Question.status == status)
        with self._db.read() as session:
            rows = list(session.exec(statement))
        rows.sort(key=lambda q: q.created_at, reverse=True)
        rows.sort(key=lambda q: (q.status != "open", _PRIORITY_RANK.get(q.priority, 9)))
        return rows
