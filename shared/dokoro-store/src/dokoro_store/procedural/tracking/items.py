"""Issues and features as rows: adding, finding, listing, and moving them along their lifecycle.

Every change is one write transaction that locks the item (``BEGIN IMMEDIATE`` on SQLite, an
advisory key lock plus ``FOR UPDATE`` on PostgreSQL), checks the transition against
:data:`~dokoro_store.procedural.tracking.rules.TRANSITIONS`, bumps the item's ``version`` and appends
the event to its history, so two agents moving one issue at once never both win.

An item is found by the id its add returned (reference §7.13: the original looked up
``<id>.md`` while its files were named ``<id>-<title words>.md``); the file name of its rendering,
with or without ``.md``, finds it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.ids import take_id
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.models import TrackingEvent, TrackingItem
from dokoro_store.procedural.tracking.markdown import item_path
from dokoro_store.procedural.tracking.rules import (
    PRIORITY_RANK,
    STATUSES,
    check_transition,
    clean_text,
    clean_texts,
)
from dokoro_store.results.tracking import TrackingEventView, TrackingItemView

__all__ = ["Change", "ItemService", "view_of"]

_LOCK = "tracking_item"
_ESTIMATE_MAX = 40
# Fields a hand edit may change, and the column each one is.
_FIELD_LIMITS = {"title": 300, "estimate": _ESTIMATE_MAX}


@dataclass(frozen=True)
class Change:
    """What a lifecycle step did: the item after it, its status before, the kinds of secret removed."""

    item: TrackingItem
    previous: str | None
    redacted: tuple[str, ...] = ()


def view_of(item: TrackingItem, events: Sequence[TrackingEvent] = ()) -> TrackingItemView:
    return TrackingItemView(
        id=item.id,
        kind=item.kind,
        title=item.title,
        status=item.status,
        priority=item.priority,
        category=item.category,
        complexity=item.complexity,
        estimate=item.estimate,
        description=item.description,
        solution=item.solution,
        plan_path=item.plan_path,
        plan_approach=item.plan_approach,
        session_id=item.session_id,
        agent_id=item.agent_id,
        created_at=item.created_at,
        updated_at=item.updated_at,
        started_at=item.started_at,
        completed_at=item.completed_at,
        version=item.version,
        path=item_path(item),
        history=[
            TrackingEventView(
                seq=e.seq,
                action=e.action,
                from_status=e.from_status,
                to_status=e.to_status,
                agent_id=e.agent_id,
                note=e.note,
                at=e.at,
            )
            for e in events
        ],
    )


class ItemService:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    # ------------------------------------------------------------------ reads
    def resolve(self, given: str, kind: str) -> TrackingItem:
        """The item an agent named: its id, or the file name of its rendering."""
        text = (given or "").strip()
        if not text:
            raise InvalidArgumentError(f"{kind}_id must not be empty; pass the id dokoro_{kind}_add returned")
        name = text.rsplit("/", 1)[-1]
        name = name[:-3] if name.endswith(".md") else name
        with self._db.read() as session:
            row = session.get(TrackingItem, name)
            if row is None:
                # A rendering's stem is "<id>-<title words>": the longest id it starts with.
                candidates = [
                    r
                    for r in session.exec(select(TrackingItem).where(col(TrackingItem.kind) == kind))
                    if name.startswith(r.id + "-")
                ]
                row = max(candidates, key=lambda r: len(r.id), default=None)
            if row is not None and row.kind != kind:
                article = "an" if row.kind == "issue" else "a"
                raise InvalidArgumentError(
                    f"{text!r} is {article} {row.kind}, not a {kind}; use the dokoro_{row.kind}_* tools"
                )
            if row is None:
                recent = session.exec(
                    select(TrackingItem.id)
                    .where(col(TrackingItem.kind) == kind)
                    .order_by(col(TrackingItem.created_at).desc())
                    .limit(5)
                ).all()
        if row is None:
            hint = f" Recent {kind}s: {', '.join(recent)}." if recent else f" There are no {kind}s yet."
            raise NotFoundError(f"No {kind} with id {text!r}.{hint} List them with dokoro_{kind}_list.")
        return row

    def get(self, item_id: str) -> TrackingItem | None:
        with self._db.read() as session:
            return session.get(TrackingItem, item_id)

    def events(self, item_ids: Sequence[str]) -> dict[str, list[TrackingEvent]]:
        out: dict[str, list[TrackingEvent]] = {i: [] for i in item_ids}
        if not item_ids:
            return out
        with self._db.read() as session:
            for start in range(0, len(item_ids), 500):
                chunk = list(item_ids[start : start + 500])
                rows = session.exec(
                    select(TrackingEvent)
                    .where(col(TrackingEvent.item_id).in_(chunk))
                    .order_by(col(TrackingEvent.item_id), col(TrackingEvent.seq))
                )
                for event in rows:
                    out[event.item_id].append(event)
        return out

    def all(self, kind: str | None = None) -> list[TrackingItem]:
        statement = select(TrackingItem)
        if kind is not None:
            statement = statement.where(col(TrackingItem.kind) == kind)
        with self._db.read() as session:
            return list(session.exec(statement.order_by(col(TrackingItem.id))))

    def versions(self) -> dict[str, tuple[int, str | None]]:
        """Every item's version and plan path (what deciding on stale renderings needs)."""
        with self._db.read() as session:
            rows = session.exec(select(TrackingItem.id, TrackingItem.version, TrackingItem.plan_path))
            return {str(i): (int(v), p) for i, v, p in rows}

    def listing(
        self, kind: str, status: str, priority: str, limit: int
    ) -> tuple[list[TrackingItem], int, dict[str, int]]:
        """Items of ``kind`` by priority (critical first) then newest; the matching count; counts per status."""
        rows = self.all(kind)
        counts = {s: 0 for s in STATUSES[kind]}
        for row in rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        picked = [
            r for r in rows if (status == "all" or r.status == status) and (priority == "all" or r.priority == priority)
        ]
        picked.sort(key=lambda r: r.created_at, reverse=True)
        picked.sort(key=lambda r: PRIORITY_RANK.get(r.priority, 9))
        return picked[:limit], len(picked), counts

    # ------------------------------------------------------------------ add
    def add(
        self,
        kind: str,
        base_id: str,
        *,
        title: str,
        priority: str,
        estimate: str,
        description: str | None,
        category: str | None = None,
        complexity: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> Change:
        """A new item with status ``pending`` (issues) or ``ideas`` (features); the id is ``base_id``,
        numbered ``-2``, ``-3``… when another item took it in the same minute (or second)."""
        clean_title = clean_text(title, "title", required=True, limit=_FIELD_LIMITS["title"])
        clean_estimate = clean_text(estimate, "estimate", limit=_ESTIMATE_MAX) or ("1h" if kind == "issue" else "1d")
        (safe_title, safe_description), kinds = clean_texts(clean_title, clean_text(description, "description"))
        assert safe_title is not None
        status = STATUSES[kind][0]
        now = self._clock.now()
        with self._db.write() as session:
            item_id = take_id(session, self._db.ops, col(TrackingItem.id), base_id).id
            item = TrackingItem(
                id=item_id,
                kind=kind,
                title=safe_title,
                status=status,
                priority=priority,
                category=category,
                complexity=complexity,
                estimate=clean_estimate,
                description=safe_description,
                session_id=session_id,
                agent_id=agent_id,
                created_at=now,
                updated_at=now,
                version=1,
            )
            session.add(item)
            session.flush()
            session.add(
                TrackingEvent(item_id=item_id, seq=1, action="added", to_status=status, agent_id=agent_id, at=now)
            )
        return Change(item, None, kinds)

    # ------------------------------------------------------------------ lifecycle
    def transition(
        self,
        item_id: str,
        target: str,
        *,
        verb: str,
        action: str,
        agent_id: str | None,
        note: str | None = None,
        values: dict[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> Change:
        """Move one item to ``target`` (checked against the rules) and set ``values`` with it.
        ``expected_version``: the version the caller built ``values`` from; an item another call
        changed since is refused (:class:`ConflictError`, nothing written)."""
        now = self._clock.now()
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK, [item_id])
            row = session.get(TrackingItem, item_id, with_for_update=True)
            if row is None:
                raise NotFoundError(f"{item_id!r} was removed meanwhile; list the items again")
            if expected_version is not None and row.version != expected_version:
                raise ConflictError(
                    f"{row.kind} {row.id} changed while this call worked on it (it is {row.status} now, "
                    f"version {row.version}): nothing was written. Look at it again (dokoro_{row.kind}_list), "
                    f"then {verb} it again if it still needs it"
                )
            previous = row.status
            check_transition(row.kind, row.id, previous, target, verb=verb)
            row.status = target
            if target == "active" and (row.started_at is None or previous in ("resolved", "completed")):
                row.started_at = now
            if target in ("resolved", "completed"):
                row.completed_at = now
            elif target in ("active", "pending", "planned", "ideas"):
                row.completed_at = None
            for name, value in (values or {}).items():
                setattr(row, name, value)
            self._bump(session, row, now, action, previous, target, agent_id, note)
        return Change(row, previous)

    def apply_hand_edit(  # noqa: C901 - one flat check per editable field, each with its own refusal
        self, item_id: str, changes: dict[str, str | None], agent_id: str | None, where: str
    ) -> tuple[TrackingItem | None, list[str], list[str]]:
        """Write a person's edit of a rendering back into the row, field by field.

        Returns the row after it, the fields applied, and the refusals (a status the rules do not
        allow, a value outside an enumeration) — refused fields keep the row's value.
        """
        from dokoro_store.procedural.tracking.rules import CATEGORIES, COMPLEXITIES, PRIORITIES

        applied: list[str] = []
        refused: list[str] = []
        now = self._clock.now()
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK, [item_id])
            row = session.get(TrackingItem, item_id, with_for_update=True)
            if row is None:
                return None, [], [f"{item_id} no longer exists"]
            previous = row.status
            enums = {"priority": PRIORITIES, "category": CATEGORIES, "complexity": COMPLEXITIES}
            for name, value in changes.items():
                if name == "status":
                    continue
                if name in enums:
                    text = (value or "").strip().lower()
                    if (name == "category" and row.kind != "issue") or (name == "complexity" and row.kind != "feature"):
                        continue
                    if text not in enums[name]:
                        refused.append(f"{name} {value!r} is not one of {', '.join(enums[name])}")
                        continue
                    value = text
                elif name in ("title", "estimate"):
                    if not (value or "").strip():
                        refused.append(f"{name} cannot be empty")
                        continue
                    value = (value or "").strip()[: _FIELD_LIMITS[name]]
                if value is not None:
                    (value,), _ = clean_texts(value)
                if getattr(row, name) != value:
                    setattr(row, name, value)
                    applied.append(name)
            target = (changes.get("status") or "").strip().lower()
            if target and target != previous:
                try:
                    check_transition(row.kind, row.id, previous, target, verb="a hand edit")
                except InvalidArgumentError as exc:
                    refused.append(str(exc))
                else:
                    row.status = target
                    if target == "active" and row.started_at is None:
                        row.started_at = now
                    if target in ("resolved", "completed"):
                        row.completed_at = now
                    applied.append("status")
            if applied:
                note = f"{where}: {', '.join(applied)}"
                self._bump(session, row, now, "edited by hand", previous, row.status, agent_id, note)
        return row, applied, refused

    def set_plan_markdown(self, item_id: str, text: str, agent_id: str | None) -> bool:
        """A hand edit of a feature's implementation plan becomes the plan the row holds."""
        (clean,), _ = clean_texts(text)
        now = self._clock.now()
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK, [item_id])
            row = session.get(TrackingItem, item_id, with_for_update=True)
            if row is None or row.plan_markdown == clean:
                return False
            row.plan_markdown = clean
            self._bump(session, row, now, "plan edited by hand", row.status, row.status, agent_id, row.plan_path)
        return True

    @staticmethod
    def _bump(
        session: Any,
        row: TrackingItem,
        now: datetime,
        action: str,
        previous: str | None,
        target: str | None,
        agent_id: str | None,
        note: str | None,
    ) -> None:
        row.version += 1
        row.updated_at = now
        session.add(row)
        session.add(
            TrackingEvent(
                item_id=row.id,
                seq=row.version,
                action=action,
                from_status=previous,
                to_status=target,
                agent_id=agent_id,
                note=note,
                at=now,
            )
        )
