"""The changes a person makes in ``dokoro browse``, each armed by a key and run after a y/n confirm.

``arm`` turns a key and the selected item into a :class:`Confirm` (or a refusal, a short message);
``run`` carries a confirmed one out through the store's services and says what happened. A
current-week daily file answers its first confirm with a second, forced one. The last archive
of the session can be undone (``u``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dokoro.browse.data import Item

if TYPE_CHECKING:
    from pathlib import Path

    from dokoro_store import Store

__all__ = ["FORGET_REASON", "REJECT_REASON", "Confirm", "Outcome", "UndoRecord", "arm", "memory_file", "run"]

FORGET_REASON = "forgotten by hand in dokoro browse"
REJECT_REASON = "rejected in dokoro browse"


@dataclass(frozen=True)
class UndoRecord:
    kind: str  # daily | plan
    ref: str  # the archived file (relative to the folder) | the plan id
    label: str


@dataclass(frozen=True)
class Confirm:
    # archive-plan | archive-daily | release | advance | undo | forget | approve | reject | edited
    # | approve-proposal | reject-proposal | renew
    kind: str
    prompt: str
    item: Item | None = None
    force: bool = False
    from_status: str | None = None
    to_status: str | None = None
    record: UndoRecord | None = None
    dates: tuple[tuple[str, str], ...] = ()  # renew: (review_after | valid_until, ISO time) to set


@dataclass(frozen=True)
class Outcome:
    message: str
    undo: UndoRecord | None = None  # remember this archive for `u`
    undone: bool = False  # the remembered archive was undone
    then: Confirm | None = None  # ask again (a current-week daily file)


def _daily_name(item: Item) -> str | None:
    if item.kind == "file" and item.path is not None and item.id.startswith("daily/") and item.id.count("/") == 1:
        return item.path.name
    return None


def arm(store: Store, key: str, item: Item | None, last: UndoRecord | None) -> Confirm | str:  # noqa: C901 - one flat branch per key and refusal, read top to bottom
    """The confirm a key asks for on ``item``, or why it does nothing."""
    if key == "u":
        if last is None:
            return "nothing to undo"
        return Confirm("undo", f'Undo archive of "{last.label}"? y/n', record=last)
    if item is None:
        return "nothing selected"
    if key in ("a", "w"):
        if item.archived:
            return "already archived"
        if item.kind == "plan" and key == "a" and item.ref:
            return Confirm("archive-plan", f'Archive plan "{item.label}"? y/n', item=item)
        if _daily_name(item) is not None:
            return Confirm("archive-daily", f'Archive "{item.label}" to its weekly folder? y/n', item=item)
        return "not archivable" if key == "a" else "w archives daily files only"
    if key == "r":
        if item.kind != "claim":
            return "r releases file claims only"
        return Confirm("release", f'Release claim "{item.label}"? y/n', item=item)
    if key == "p":
        from dokoro_store import NEXT_STATUS

        if item.kind != "plan" or not item.ref:
            return "p advances plans only"
        if item.archived:
            return "plan is archived (read-only)"
        plan = store.plans.get(item.ref)
        if plan is None:
            return "plan is gone"
        to = NEXT_STATUS.get(plan.status)
        if to is None:
            return f"no step forward from {plan.status}"
        return Confirm(
            "advance",
            f'Plan "{item.label}": {plan.status} → {to}? y/n',
            item=item,
            from_status=plan.status,
            to_status=to,
        )
    if key == "f":
        if item.kind != "memory" or not item.ref:
            return "f forgets memories only"
        if item.status == "deprecated":
            return "already forgotten (deprecated)"
        return Confirm("forget", f'Forget memory "{item.label}" (deprecate it)? y/n', item=item)
    if key == "n":
        return _arm_renew(store, item)
    if key in ("v", "x") and item.kind == "proposal" and item.ref:
        if item.status != "proposed":
            return f"this proposal is {item.status} already"
        if key == "v":
            return Confirm("approve-proposal", f"Approve proposal {item.label}: apply its change? y/n", item=item)
        return Confirm("reject-proposal", f"Reject proposal {item.label} (nothing changes)? y/n", item=item)
    if key in ("v", "x"):
        verb = "approves" if key == "v" else "rejects"
        if item.kind != "memory" or not item.ref:
            return f"{key} {verb} proposed memories only"
        if item.status != "proposed":
            return f"{key} {verb} proposed memories only (this one is {item.status})"
        if key == "v":
            return Confirm("approve", f'Approve memory "{item.label}" (it becomes active)? y/n', item=item)
        return Confirm("reject", f'Reject memory "{item.label}" (it is deprecated, kept)? y/n', item=item)
    return f"no action on {key}"


def _arm_renew(store: Store, item: Item) -> Confirm | str:
    """``n``: renew a stale memory, its past dates pushed on (:func:`~.memories.renewal`)."""
    from dokoro_store import iso

    from dokoro.browse.memories import IN_FORCE, renewal

    if item.kind != "memory" or not item.ref:
        return "n renews stale memories only"
    memory = store.memories.get(item.ref)
    if memory.state not in IN_FORCE:
        return f"n renews memories in force only (this one is {memory.state})"
    dates = tuple((name, iso(when)) for name, when in renewal(memory, store.clock.now()).items())
    if not dates and not item.flag:
        return "not stale: nothing to renew"
    what = ", ".join(f"{name} → {when[:10]}" for name, when in dates) or "it still holds"
    return Confirm("renew", f'Renew memory "{item.label}": {what}? y/n', item=item, dates=dates)


def memory_file(store: Store, memory_id: str) -> Path | str:
    """The markdown file of a memory (for the editor), or why there is none."""
    from dokoro_store import DokoroError

    try:
        return store.memories.file_of(memory_id)
    except DokoroError as exc:
        return f"refused: {exc}"


def run(store: Store, confirm: Confirm) -> Outcome:
    """Carry out a confirmed action; the outcome's message says what happened."""
    from dokoro_store import DokoroError

    try:
        return _run(store, confirm)
    except DokoroError as exc:
        return Outcome(f"refused: {exc}")


def _run(store: Store, confirm: Confirm) -> Outcome:  # noqa: C901 - one flat branch per confirmed action kind
    item = confirm.item
    if confirm.kind == "undo" and confirm.record is not None:
        return _undo(store, confirm.record)
    assert item is not None
    if confirm.kind == "archive-plan" and item.ref:
        result = store.plans.archive(item.ref)
        if not result.ok:
            return Outcome(f"archive failed: {result.error}")
        if result.already:
            return Outcome("already archived")
        return Outcome(f"archived: {item.label}", undo=UndoRecord("plan", item.ref, item.label))
    if confirm.kind == "archive-daily":
        name = _daily_name(item)
        assert name is not None
        daily = store.archive.archive_daily_file(name, force=confirm.force)
        if daily.outcome == "moved" and daily.target:
            return Outcome(f"moved to weekly archive: {item.label}", undo=UndoRecord("daily", daily.target, item.label))
        if daily.outcome == "currentWeek":
            prompt = f'⚠ "{item.label}" is CURRENT WEEK — archive anyway? y/n'
            return Outcome("", then=replace(confirm, force=True, prompt=prompt))
        messages = {
            "alreadyArchived": "already archived",
            "claimed": "skipped: the file has a live claim",
            "missing": "the file is gone (already moved?)",
        }
        return Outcome(messages.get(daily.outcome, f"archive failed: {daily.error or daily.outcome}"))
    if confirm.kind == "release" and item.ref:
        outcome = store.coord.claims.release_stale(item.ref)
        return Outcome(
            {
                "released": f"released claim: {item.label}",
                "alreadyReleased": "claim already released",
                "holderLive": "holder is live — not releasing",
                "missing": "claim is gone",
            }[outcome]
        )
    if confirm.kind == "advance" and item.ref and confirm.from_status:
        from dokoro_store import ConflictError

        try:
            plan = store.plans.advance(item.ref, confirm.from_status)
        except ConflictError:
            return Outcome("plan changed — aborted")
        return Outcome(f"plan {confirm.from_status} → {plan.status}: {item.label}")
    if confirm.kind == "forget" and item.ref:
        _memory, forgotten = store.memories.forget(item.ref, reason=FORGET_REASON)
        flagged = forgotten.dependents_flagged
        also = f"; now stale (they depend on it): {', '.join(flagged)}" if flagged else ""
        return Outcome(f"forgotten (deprecated): {item.label}{also}")
    if confirm.kind == "edited" and item.ref:
        # Not asked first: the edit is the person's own; the reconcile keeps the old version.
        synced = store.memories.sync_files()
        if synced.quiet:
            return Outcome(f"no change: {item.label}")
        return Outcome("; ".join(line.removeprefix("- ") for line in synced.lines()))
    if confirm.kind == "renew" and item.ref:
        wanted = dict(confirm.dates)
        renewed = store.upkeep.renew(
            item.ref, review_after=wanted.get("review_after"), valid_until=wanted.get("valid_until")
        )
        dates = ", ".join(f"{name} {when[:10]}" for name, when in confirm.dates)
        still = f"; still {renewed.stale}" if renewed.stale else ""
        return Outcome(f"renewed: {item.label}" + (f" ({dates})" if dates else "") + still)
    if confirm.kind == "approve-proposal" and item.ref:
        done = store.proposals.approve(item.ref)
        return Outcome(f"approved: {done.proposal.outcome}")
    if confirm.kind == "reject-proposal" and item.ref:
        store.proposals.reject(item.ref, reason=REJECT_REASON)
        return Outcome(f"rejected: {item.label}")
    if confirm.kind == "approve" and item.ref:
        approved = store.memories.approve(item.ref)
        also = f"; it supersedes {approved.superseded.title!r}" if approved.superseded is not None else ""
        return Outcome(f"approved (active): {item.label}{also}")
    if confirm.kind == "reject" and item.ref:
        store.memories.reject(item.ref, reason=REJECT_REASON)
        return Outcome(f"rejected (deprecated): {item.label}")
    return Outcome("nothing done")


def _undo(store: Store, record: UndoRecord) -> Outcome:
    if record.kind == "plan":
        store.plans.unarchive(record.ref)
        return Outcome(f"restored: {record.label}", undone=True)
    result = store.archive.unarchive_daily_file(record.ref)
    messages = {
        "restored": f"restored: {record.label}",
        "missing": "undo: the archived file is gone",
        "occupied": "undo: the original path is occupied",
    }
    return Outcome(messages.get(result.outcome, f"undo failed: {result.error}"), undone=result.outcome == "restored")
