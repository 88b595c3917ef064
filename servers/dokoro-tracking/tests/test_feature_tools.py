"""Feature tools through the MCP client: ideas → planned → active, plans as renderings."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytestmark = pytest.mark.anyio


async def test_a_feature_is_planned_with_a_plan_file_then_started(call, root, clock):
    added = await call(
        "dokoro_feature_add", title="Dark mode", complexity="simple", description="Follow the OS setting."
    )
    feature = added.structured_content["item"]
    assert feature["id"] == "feature-20260610-222315"
    assert feature["status"] == "ideas"
    assert (root / added.structured_content["path"]).parent == root / "tracking" / "features" / "ideas"

    clock.advance(timedelta(minutes=1))
    planned = await call("dokoro_feature_plan", feature_id=feature["id"], approach="do_new_research")
    plan_path = planned.structured_content["plan_path"]
    assert plan_path == "features/20260610-222415-dark-mode-implementation-plan.md"
    plan = (root / plan_path).read_text(encoding="utf-8")
    assert "# Implementation Plan: Dark mode" in plan
    assert "- [ ] Compare at least two options and their trade-offs" in plan
    assert "### Phase 3: Ship" in plan  # a simple feature gets three phases
    item = planned.structured_content["item"]
    assert item["status"] == "planned" and item["plan_path"] == plan_path
    rendering = (root / planned.structured_content["path"]).read_text(encoding="utf-8")
    assert f"- **Plan:** {plan_path}" in rendering
    assert not (root / added.structured_content["path"]).exists()

    started = await call("dokoro_feature_start", feature_id=feature["id"])
    assert started.structured_content["item"]["status"] == "active"
    assert started.structured_content["item"]["started_at"] == "2026-06-10T22:24:15Z"
    listed = await call("dokoro_feature_list", status="active")
    assert [f["id"] for f in listed.structured_content["items"]] == [feature["id"]]
    assert listed.structured_content["counts"]["active"] == 1


async def test_planning_with_existing_research_cites_what_the_store_holds(call, root):
    research = root / "research" / "theme-switching.md"
    research.parent.mkdir(parents=True)
    research.write_text("# Theme switching\n\nUse CSS variables and prefers-color-scheme for dark mode.\n")
    feature = (await call("dokoro_feature_add", title="Dark mode theme")).structured_content["item"]["id"]

    planned = await call("dokoro_feature_plan", feature_id=feature, approach="use_existing_research")
    plan = (root / planned.structured_content["plan_path"]).read_text(encoding="utf-8")
    assert "Read **Theme switching** (`research/theme-switching.md`)" in plan


async def test_feature_transitions_follow_the_rules(call, fail):
    feature = (await call("dokoro_feature_add", title="Export CSV")).structured_content["item"]["id"]
    await call("dokoro_feature_start", feature_id=feature)
    again = await fail("dokoro_feature_start", feature_id=feature)
    assert f"feature {feature} is already active" in again
    late = await fail("dokoro_feature_plan", feature_id=feature)
    assert f"feature {feature} is active; it cannot go to planned (plan). From active it can go to: completed" in late
    assert "No feature with id 'feature-1'" in await fail("dokoro_feature_start", feature_id="feature-1")
    assert "approach" in await fail("dokoro_feature_plan", feature_id=feature, approach="guess")


async def test_marking_a_feature_completed_by_hand_is_read_back(call, root):
    added = await call("dokoro_feature_add", title="Search box")
    feature = added.structured_content["item"]["id"]
    started = await call("dokoro_feature_start", feature_id=feature)
    active = root / started.structured_content["path"]
    completed = root / "tracking" / "features" / "completed" / active.name
    completed.parent.mkdir(parents=True, exist_ok=True)
    active.rename(completed)

    listed = await call("dokoro_feature_list")
    item = listed.structured_content["items"][0]
    assert item["status"] == "completed" and item["completed_at"] == "2026-06-10T22:23:15Z"
    assert completed.exists()


async def test_a_hand_edit_of_the_plan_becomes_the_plan_the_feature_holds(call, root, store):
    feature = (await call("dokoro_feature_add", title="Offline mode")).structured_content["item"]["id"]
    planned = await call("dokoro_feature_plan", feature_id=feature)
    plan = root / planned.structured_content["plan_path"]
    plan.write_text(plan.read_text(encoding="utf-8") + "\n## Risks\n\n- Sync conflicts\n", encoding="utf-8")

    listed = await call("dokoro_feature_list")
    assert listed.structured_content["reconciled"][0]["action"] == "applied"
    row = store.tracking.items.get(feature)
    assert row.plan_markdown.endswith("## Risks\n\n- Sync conflicts\n")
    assert plan.read_text(encoding="utf-8").endswith("- Sync conflicts\n")
