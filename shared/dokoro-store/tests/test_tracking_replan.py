"""Planning a feature again: within a minute of its plan (agents racing, a retry) the answer is the
plan it has and no file is written; later, a new plan is written and the earlier one is kept."""

from __future__ import annotations

from datetime import timedelta

from dokoro_store import FrozenClock, Store


def test_a_feature_planned_moments_ago_is_not_planned_twice(any_store: Store, clock: FrozenClock) -> None:
    feature = any_store.tracking.add_feature("Session refresh dashboard").item.id
    first = any_store.tracking.plan_feature(feature, agent_id="alice")
    clock.advance(timedelta(seconds=20))

    again = any_store.tracking.plan_feature(feature, agent_id="bob")

    assert (first.action, again.action) == ("planned", "already planned")
    assert again.plan_path == first.plan_path and again.item.status == "planned"
    plans = sorted((any_store.paths.root / "features").glob("*-implementation-plan.md"))
    assert [p.name for p in plans] == [first.plan_path.rsplit("/", 1)[1]]  # type: ignore[union-attr]

    clock.advance(timedelta(minutes=2))
    later = any_store.tracking.plan_feature(feature, agent_id="bob")
    assert later.action == "replanned" and later.plan_path != first.plan_path
    assert len(list((any_store.paths.root / "features").glob("*-implementation-plan.md"))) == 2  # the earlier kept
