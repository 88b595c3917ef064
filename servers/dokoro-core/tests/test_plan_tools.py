"""Plan tools through the MCP client: the lifecycle end to end, read-only archives, healing."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytestmark = pytest.mark.anyio

both_backends = pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)


@both_backends
async def test_a_plan_goes_from_create_to_archived_and_read_only(call, fail, client, clock, root, read_json):
    created = await call("dokoro_plan_create", title="Ship search", items=["index", "rank", "document"])
    plan_id = created.structured_content["id"]
    assert "Plan Created" in created.content[0].text
    assert f"**Plan ID:** {plan_id}" in created.content[0].text
    assert "**Status:** ACTIVE" in created.content[0].text
    assert read_json(f".mcp/plans/{plan_id}.json")["status"] == "active"

    clock.advance(timedelta(minutes=90))
    checked = await call("dokoro_plan_check", itemIndex=1, notes="FTS5 + trigram")
    assert "**Progress:** 33% (1/3)" in checked.content[0].text
    assert "1h 30m since the plan was created" in checked.content[0].text
    blocked = await call("dokoro_plan_blocker", itemIndex=3, blocker="waiting for the API freeze")
    assert "Blocker Added" in blocked.content[0].text
    await call("dokoro_plan_check", itemIndex=2, planId=plan_id)

    shown = (await call("dokoro_plan_status")).content[0].text
    assert shown.startswith("## Ship search\n")
    assert "[█████████████░░░░░░░] 67%" in shown
    assert "1. [x] index ✓ 2026-06-10T23:53:15Z" in shown
    assert "📝 FTS5 + trigram" in shown
    assert "3. [ ] document\n   ⛔ waiting for the API freeze" in shown

    validated = await call("dokoro_plan_validate", notes="docs follow next week")
    text = validated.content[0].text
    assert "| 3 | document | ❌ | - | - |" in text
    assert "📄 Report saved to: daily/2026-06-10-23h53-wednesday-validation-" in text
    assert f"📦 Plan archived to: .mcp/plans/archive/2026-06/{plan_id}.json" in text
    assert validated.structured_content["archived"] is True
    assert (root / validated.structured_content["report"]).exists()
    assert not (root / ".mcp" / "plans" / f"{plan_id}.json").exists()
    assert read_json(".mcp/plans/index.json")[plan_id]["archived"] is True

    for tool, arguments in (
        ("dokoro_plan_check", {"itemIndex": 3, "planId": plan_id}),
        ("dokoro_plan_blocker", {"itemIndex": 3, "blocker": "x", "planId": plan_id}),
        ("dokoro_plan_validate", {"planId": plan_id}),
    ):
        message = await fail(tool, **arguments)
        assert f"Plan {plan_id} is archived and read-only at `.mcp/plans/archive/2026-06/{plan_id}.json`" in message

    listed = await call("dokoro_plan_list")
    assert "(archived)" in listed.content[0].text
    assert listed.structured_content["plans"][0]["archived"] is True
    status = (await call("dokoro_plan_status", planId=plan_id)).content[0].text
    assert status.startswith("## Ship search (archived)")
    assert "(read-only)" in status


async def test_checking_the_last_item_completes_the_plan_and_unchecking_reopens_it(call):
    await call("dokoro_plan_create", title="Tiny", items=["only step"])

    done = await call("dokoro_plan_check", itemIndex=1)
    assert done.structured_content["plan"]["status"] == "completed"
    assert "validate with dokoro_plan_validate" in done.content[0].text

    undone = await call("dokoro_plan_check", itemIndex=1, uncheck=True)
    assert undone.structured_content["plan"]["status"] == "active"
    assert undone.structured_content["reopened"] is True
    assert "Item Unchecked" in undone.content[0].text
    assert "reopened" in undone.content[0].text


async def test_require_complete_fails_an_unfinished_plan_and_keeps_it_live(call, root):
    created = await call("dokoro_plan_create", title="Strict", items=["a", "b"])
    plan_id = created.structured_content["id"]
    await call("dokoro_plan_check", itemIndex=1)

    validated = await call("dokoro_plan_validate", requireComplete=True)

    assert validated.structured_content["plan"]["status"] == "failed"
    assert validated.structured_content["archived"] is False
    assert "📦" not in validated.content[0].text
    assert (root / ".mcp" / "plans" / f"{plan_id}.json").exists()


async def test_bad_plan_calls_fail_with_a_fix_and_change_nothing(call, fail, snapshot):
    assert "No active plans to check" in await fail("dokoro_plan_check", itemIndex=1)
    await call("dokoro_plan_create", title="Three", items=["a", "b", "c"])
    before = snapshot()

    assert "Plan has 3 items (itemIndex is 1-based: 1..3)" in await fail("dokoro_plan_check", itemIndex=4)
    assert "itemIndex: Input should be greater than or equal to 1" in await fail(
        "dokoro_plan_blocker", itemIndex=0, blocker="x"
    )
    assert "No plan with ID 'plan-nope'" in await fail("dokoro_plan_check", itemIndex=1, planId="plan-nope")
    assert "blocker must not be empty" in await fail("dokoro_plan_blocker", itemIndex=1, blocker="  ")
    assert "items must list at least one step" in await fail("dokoro_plan_create", title="Empty", items=[])
    assert "title must not be empty" in await fail("dokoro_plan_create", title=" ", items=["a"])
    await fail("dokoro_plan_list", status="bogus")

    assert snapshot() == before


async def test_an_interrupted_archive_is_healed_on_the_next_read(call, fail, root, read_json):
    created = await call("dokoro_plan_create", title="Interrupted", items=["a"])
    plan_id = created.structured_content["id"]
    await call("dokoro_plan_check", itemIndex=1)
    plans = root / ".mcp" / "plans"
    # The crash window of an archive: the file moved, the row and the index not updated yet.
    (plans / "archive" / "2026-06").mkdir(parents=True)
    (plans / f"{plan_id}.json").replace(plans / "archive" / "2026-06" / f"{plan_id}.json")

    listed = await call("dokoro_plan_list")

    assert listed.structured_content["plans"][0]["archived"] is True
    assert read_json(".mcp/plans/index.json")[plan_id] == {
        "title": "Interrupted",
        "archived": True,
        "archive_path": f"archive/2026-06/{plan_id}.json",
    }
    assert "archived and read-only" in await fail("dokoro_plan_check", itemIndex=1, planId=plan_id, uncheck=True)


async def test_listing_filters_by_status_and_says_when_there_is_nothing(call, clock):
    assert "No Plans" in (await call("dokoro_plan_list")).content[0].text
    assert "No Plans" in (await call("dokoro_plan_status")).content[0].text
    await call("dokoro_plan_create", title="Alpha", items=["a"])
    clock.advance(timedelta(minutes=1))
    await call("dokoro_plan_create", title="Beta | two", items=["a"])
    await call("dokoro_plan_check", itemIndex=1)

    table = (await call("dokoro_plan_list")).content[0].text.splitlines()
    assert table[0] == "| Status | Plan | Progress | Created |"
    assert table[2].startswith("| ✅ completed | Beta \\| two `plan-")
    assert table[3].startswith("| 🔄 active | Alpha `plan-")
    completed = await call("dokoro_plan_list", status="completed")
    assert [p["title"] for p in completed.structured_content["plans"]] == ["Beta | two"]
    assert "No validated plans" in (await call("dokoro_plan_list", status="validated")).content[0].text


async def test_plans_made_by_one_agent_are_seen_by_another(make_client, call):
    await call("dokoro_plan_create", title="Shared", items=["a", "b"])
    async with make_client() as other:
        checked = await other.call_tool("dokoro_plan_check", {"itemIndex": 2})
    assert not checked.is_error
    status = await call("dokoro_plan_status")
    assert status.structured_content["plan"]["done"] == 1


async def test_plan_steps_are_logged_to_the_claimed_workspace(call, read_current):
    await call("dokoro_workspace_claim", task="plan the week")
    await call("dokoro_plan_create", title="Week", items=["write tests"])
    await call("dokoro_plan_check", itemIndex=1)
    await call("dokoro_plan_validate")
    _front, body = read_current()
    assert "PLAN CREATED: Week" in body
    assert "COMPLETED: write tests" in body
    assert "PLAN VALIDATED: Week" in body
