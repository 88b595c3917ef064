"""Affective memory: which tools can an agent trust? (reference §2.7, §4.1, §4.12)

Every outcome is one ``agent_feedback`` row stamped with the database's clock. Routing is
answered by one aggregate query: the database counts the outcomes of each (agent, tool) group
and sums their recency weights ``0.5 ** (age / half_life)``, so a store with a million outcomes
is never loaded into Python. The Wilson lower bound is computed on the group counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import TextClause, bindparam, text

from dokoro_store.clock import parse_iso
from dokoro_store.db.clock import db_now, db_seconds
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.db.types import UtcDateTime
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import AgentFeedback
from dokoro_store.results.feedback import RecordedOutcome, Route, ToolTally
from dokoro_store.walls.names import MAX_NAME, required_name

__all__ = [
    "DEFAULT_CONFIDENCE_LEVEL",
    "DEFAULT_HALF_LIFE_DAYS",
    "DEFAULT_MIN_SAMPLES",
    "OUTCOMES",
    "FeedbackService",
    "Outcome",
    "wilson_lower_bound",
    "z_for_confidence",
]

OUTCOMES = ("success", "failure", "partial", "rejected", "timeout")
DEFAULT_HALF_LIFE_DAYS = 14.0
DEFAULT_MIN_SAMPLES = 5
DEFAULT_CONFIDENCE_LEVEL = 0.95
# The reference's z for 95 %, kept exactly (norm.ppf(0.975) is 1.959964...).
Z_95 = 1.96
MAX_ERROR = 4000
_DAY = 86400.0


@dataclass(frozen=True)
class Outcome:
    """One outcome to record in a batch (automatic capture).

    ``age_seconds`` says how long before the write it happened, so a buffered outcome is dated
    when the call ended rather than when the buffer was flushed.
    """

    agent_id: str
    tool_name: str
    outcome: str
    latency_ms: int | None = None
    confidence: float | None = None
    error_message: str | None = None
    age_seconds: float = 0.0


def z_for_confidence(level: float) -> float:
    """The two-sided normal quantile for a confidence level: 1.96 at 95 %, else from scipy."""
    if not 0.5 <= level < 1.0:
        raise InvalidArgumentError(f"confidence_level must be in [0.5, 1), e.g. 0.95 or 0.99; got {level}")
    if math.isclose(level, DEFAULT_CONFIDENCE_LEVEL, rel_tol=0.0, abs_tol=1e-12):
        return Z_95
    try:
        from scipy.stats import norm  # type: ignore[import-untyped]  # heavy: only for a non-default level
    except ImportError:
        raise InvalidArgumentError(
            f"confidence_level={level} needs scipy, which is not installed here; omit confidence_level "
            "(95 %, z = 1.96) or install it: pip install 'dokoro-store[stats]'"
        ) from None
    return float(norm.ppf(1.0 - (1.0 - level) / 2.0))


def wilson_lower_bound(successes: float, n: float, z: float = Z_95) -> float:
    """Lower bound of the Wilson score interval of ``successes / n`` (0 when ``n`` is 0).

    ``successes`` and ``n`` may be recency-weighted sums (routing's ranking): old outcomes then
    count as less evidence, so the bound widens as they fade."""
    if n <= 1e-12:
        return 0.0
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt((p * (1 - p) + z2 / (4 * n)) / n)
    return max(0.0, (centre - margin) / (1 + z2 / n))


def _typed(sql: str) -> TextClause:
    """The statement, with ``:since`` bound as a UTC timestamp in the column's own format."""
    statement = text(sql)
    if ":since" in sql:
        statement = statement.bindparams(bindparam("since", type_=UtcDateTime()))
    return statement


def _outcome(value: str) -> str:
    if value not in OUTCOMES:
        raise InvalidArgumentError(f"outcome must be one of {', '.join(OUTCOMES)}; got {value!r}")
    return value


def _since(value: str | None) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise InvalidArgumentError(f"since: {exc}") from None


class FeedbackService:
    def __init__(self, db: Database) -> None:
        self._db = db

    def now(self) -> datetime:
        """The database's clock (what ``recorded_at`` and the ages of routing are measured on)."""
        with self._db.read() as session:
            return db_now(session, self._db.ops)

    # ------------------------------------------------------------------ record
    def record(
        self,
        agent_id: str,
        tool_name: str,
        outcome: str,
        *,
        confidence: float | None = None,
        latency_ms: int | None = None,
        error_message: str | None = None,
        doc_id: str | None = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        recorded_at: datetime | None = None,
    ) -> RecordedOutcome:
        """Record one outcome, stamped with the database clock (or ``recorded_at``, for imports)."""
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            raise InvalidArgumentError(f"confidence must be between 0 and 1; got {confidence}")
        if latency_ms is not None and latency_ms < 0:
            raise InvalidArgumentError(f"latency_ms must be 0 or more; got {latency_ms}")
        if error_message is not None and len(error_message) > MAX_ERROR:
            raise InvalidArgumentError(f"error_message is {len(error_message)} characters; at most {MAX_ERROR}")
        if recorded_at is not None and recorded_at.tzinfo is None:
            raise InvalidArgumentError("recorded_at must carry a timezone (UTC)")
        values: dict[str, Any] = {
            "agent_id": required_name(agent_id, "agent_id"),
            "tool_name": required_name(tool_name, "tool_name"),
            "outcome": _outcome(outcome),
            "confidence": confidence,
            "latency_ms": latency_ms,
            "error_message": error_message or None,
            "doc_id": (doc_id or "").strip() or None,
            "session_id": (session_id or "").strip() or None,
            "metadata_json": metadata or None,
        }
        with self._db.write() as session:
            row = AgentFeedback(**values, recorded_at=recorded_at or db_now(session, self._db.ops))
            session.add(row)
            session.flush()
            assert row.id is not None  # flushed
            return RecordedOutcome(
                id=row.id,
                agent_id=row.agent_id,
                tool_name=row.tool_name,
                outcome=row.outcome,
                recorded_at=row.recorded_at,
            )

    def record_many(self, outcomes: Sequence[Outcome]) -> int:
        """Record a batch in one transaction (automatic capture); returns how many were written.

        Lenient where :meth:`record` refuses: overlong names are cut, and an outcome without an
        agent, a tool or a valid outcome is skipped, so one odd call never costs the batch.
        """
        rows: list[dict[str, Any]] = []
        for item in outcomes:
            agent, tool = (item.agent_id or "").strip()[:MAX_NAME], (item.tool_name or "").strip()[:MAX_NAME]
            if not agent or not tool or item.outcome not in OUTCOMES:
                continue
            rows.append(
                {
                    "agent_id": agent,
                    "tool_name": tool,
                    "outcome": item.outcome,
                    "confidence": item.confidence,
                    "latency_ms": item.latency_ms,
                    "error_message": (item.error_message or "")[:MAX_ERROR] or None,
                    "age": max(0.0, item.age_seconds),
                }
            )
        if not rows:
            return 0
        table = table_of(AgentFeedback)
        with self._db.write() as session:
            # One statement: on SQLite the database's clock is this machine's, read here; a server's
            # last outcomes are written so as it exits.
            now = datetime.now(UTC) if self._db.ops.local_clock else db_now(session, self._db.ops)
            for row in rows:
                row["recorded_at"] = now - timedelta(seconds=row.pop("age"))
            session.execute(table.insert(), rows)
        return len(rows)

    # ------------------------------------------------------------------ query
    def query(
        self,
        *,
        tool_name: str | None = None,
        agent_id: str | None = None,
        since: str | None = None,
        limit: int = 50,
    ) -> list[ToolTally]:
        """Outcome counts per tool, most used first."""
        if not 1 <= limit <= 500:
            raise InvalidArgumentError(f"limit must be between 1 and 500; got {limit}")
        where, params = self._filters(tool_name, agent_id, _since(since))
        # Grouping by outcome too lets the database count without a CASE per row.
        sql = f"""
            SELECT tool_name, outcome, COUNT(*) AS n, SUM(confidence) AS confidence_sum,
                   COUNT(confidence) AS confidence_n, SUM(latency_ms) AS latency_sum, COUNT(latency_ms) AS latency_n
            FROM agent_feedback {where}
            GROUP BY tool_name, outcome
        """
        with self._db.read() as session:
            rows = session.execute(_typed(sql), params).all()
        groups: dict[str, dict[str, float]] = {}
        for r in rows:
            group = groups.setdefault(r.tool_name, dict.fromkeys((*OUTCOMES, "cs", "cn", "ls", "ln"), 0.0))
            group[r.outcome] = group.get(r.outcome, 0.0) + int(r.n)
            group["cs"] += float(r.confidence_sum or 0.0)
            group["cn"] += int(r.confidence_n)
            group["ls"] += float(r.latency_sum or 0.0)
            group["ln"] += int(r.latency_n)
        tallies = []
        for name, g in groups.items():
            total = int(sum(g.get(o, 0.0) for o in g if o not in ("cs", "cn", "ls", "ln")))
            tallies.append(
                ToolTally(
                    tool_name=name,
                    total=total,
                    success=int(g["success"]),
                    failure=int(g["failure"]),
                    partial=int(g["partial"]),
                    rejected=int(g["rejected"]),
                    timeout=int(g["timeout"]),
                    success_rate=g["success"] / total if total else 0.0,
                    avg_confidence=g["cs"] / g["cn"] if g["cn"] else None,
                    avg_latency_ms=g["ls"] / g["ln"] if g["ln"] else None,
                )
            )
        tallies.sort(key=lambda tally: (-tally.total, tally.tool_name))
        return tallies[:limit]

    # ------------------------------------------------------------------ route
    def route(
        self,
        *,
        tool_name: str | None = None,
        agent_id: str | None = None,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
        min_samples: int = DEFAULT_MIN_SAMPLES,
        confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    ) -> list[Route]:
        """Rank (agent, tool) groups by the Wilson lower bound of their recency-weighted outcomes.

        Grouped per tool when ``agent_id`` is given, else per (agent, tool), so one agent's
        record never vouches for another's. Each outcome weighs ``0.5 ** (age_days /
        half_life_days)`` (ages on the database clock): ``decayed_rate`` is the weighted success
        rate and ``decayed_wilson``, the ranking, the Wilson lower bound of the weighted counts
        (successes Σw·[success] of n Σw) — so stale failures fade, as the README promises, while a
        single lucky success still cannot outrank a long record (its n stays small). This departs
        from the reference (§4.1.7 sorts by the raw bound, which no half-life can change: ten old
        failures and ten fresh successes ranked alike at 14 and 1,000 days); ``wilson_lower``, the
        bound on the raw counts, is still reported. Ties: the raw bound, then n.
        """
        if not (half_life_days > 0 and math.isfinite(half_life_days)):
            raise InvalidArgumentError(f"half_life_days must be a positive number of days; got {half_life_days}")
        if min_samples < 1:
            raise InvalidArgumentError(f"min_samples must be 1 or more; got {min_samples}")
        z = z_for_confidence(confidence_level)
        ops = self._db.ops
        where, params = self._filters(tool_name, agent_id, None)
        weight = ops.half_life_weight_sql(f"(:now - {ops.epoch_of_sql('recorded_at')})", ":half_life")
        # One row per (agent, tool, outcome): the database counts and sums the weights, scanning
        # only the covering index; the few group rows are folded together here.
        sql = f"""
            SELECT agent_id, tool_name, outcome, COUNT(*) AS n, SUM({weight}) AS weight
            FROM agent_feedback {where}
            GROUP BY agent_id, tool_name, outcome
        """
        params["half_life"] = half_life_days * _DAY
        with self._db.read() as session:
            params["now"] = db_seconds(session, self._db.ops)
            rows = session.execute(_typed(sql), params).all()
        counts: dict[tuple[str, str], dict[str, int]] = {}
        weights: dict[tuple[str, str], list[float]] = {}
        for r in rows:
            key = (r.agent_id, r.tool_name)
            counts.setdefault(key, dict.fromkeys(OUTCOMES, 0))[r.outcome] = int(r.n)
            total_and_success = weights.setdefault(key, [0.0, 0.0])
            total_and_success[0] += float(r.weight or 0.0)
            if r.outcome == "success":
                total_and_success[1] += float(r.weight or 0.0)
        routes = []
        for (agent, tool), by_outcome in counts.items():
            n = sum(by_outcome.values())
            total_weight, success_weight = weights[(agent, tool)]
            decayed = wilson_lower_bound(success_weight, total_weight, z)
            routes.append(
                Route(
                    tool_name=tool,
                    agent_id=agent,
                    n=n,
                    success=by_outcome["success"],
                    failure=by_outcome["failure"],
                    partial=by_outcome["partial"],
                    rejected=by_outcome["rejected"],
                    timeout=by_outcome["timeout"],
                    decayed_rate=success_weight / total_weight if total_weight > 0 else 0.0,
                    wilson_lower=wilson_lower_bound(by_outcome["success"], n, z),
                    decayed_wilson=decayed,
                    weighted_n=total_weight,
                    confident=n >= min_samples,
                )
            )
        routes.sort(
            key=lambda route: (-route.decayed_wilson, -route.wilson_lower, -route.n, route.tool_name, route.agent_id)
        )
        return routes

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _filters(tool_name: str | None, agent_id: str | None, since: datetime | None) -> tuple[str, dict[str, Any]]:
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if tool_name is not None and tool_name.strip():
            clauses.append("tool_name = :tool_name")
            params["tool_name"] = tool_name.strip()
        if agent_id is not None and agent_id.strip():
            clauses.append("agent_id = :agent_id")
            params["agent_id"] = agent_id.strip()
        if since is not None:
            clauses.append("recorded_at >= :since")
            params["since"] = since
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", params
