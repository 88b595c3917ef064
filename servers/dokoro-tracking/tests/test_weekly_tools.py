"""The week's tools: rows per ISO week, currentWeek.md as a rendering a person may edit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

pytestmark = pytest.mark.anyio

CURRENT = """# Current Workspace

## 🎯 Active Task
Ship the export

## 📝 Progress
- [ ] Fix crash on save when the disk is full (urgent)
- [ ] Implement CSV export
- [ ] Write the release notes
- [x] Already finished thing

## 📅 Next Steps
- [ ] Not in a synced section
"""


async def test_items_land_in_this_iso_weeks_section_once(call, root):
    added = await call(
        "dokoro_weekly_add_item", type="issue", title="Fix Safari login", priority="high", effort="2h", id="2026-x"
    )
    item = added.structured_content["item"]
    assert added.structured_content["created"] is True
    assert (item["id"], item["week"], item["status"]) == ("2026-W24-1", "2026-W24", "open")
    text = (root / "currentWeek.md").read_text(encoding="utf-8")
    assert text.startswith("# 📅 Week 2026-W24 (2026-06-08 – 2026-06-14)")
    line = "- [ ] ⏳ **Fix Safari login** 🟠 (Est: 2h) [2026-x] <!-- wk:2026-W24-1 -->"
    assert f"### 🐛 Active Issues\n{line}" in text

    again = await call("dokoro_weekly_add_item", type="issue", title="fix safari login!")
    assert again.structured_content["created"] is False
    assert again.structured_content["item"]["id"] == "2026-W24-1"
    assert "Already on This Week's List" in again.content[0].text


async def test_hand_edits_of_the_section_are_read_back_and_the_rest_of_the_file_is_kept(call, root, store):
    await call("dokoro_weekly_add_item", type="issue", title="Fix Safari login")
    await call("dokoro_weekly_add_item", type="feature", title="Dark mode")
    await call("dokoro_weekly_add_item", type="task", title="Update the changelog")
    path = root / "currentWeek.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace("- [ ] ⏳ **Fix Safari login**", "- [x] ⏳ **Fix Safari login**")
    text = "\n".join(line for line in text.splitlines() if "Dark mode" not in line) + "\n"
    text = text.replace("### 📌 Tasks\n", "### 📌 Tasks\n- [ ] Write the retro notes\n")
    text += "\n## My notes\n\n- [x] talked to design\n- [ ] book the room\n"
    path.write_text(text, encoding="utf-8")

    status = await call("dokoro_weekly_status")
    by_title = {i["title"]: i for i in status.structured_content["items"]}
    assert by_title["Fix Safari login"]["status"] == "done"
    assert "Dark mode" not in by_title  # dropped, not deleted
    assert {i.title: i.status for i in store.tracking.weekly.all()}["Dark mode"] == "dropped"
    assert by_title["Write the retro notes"]["source"] == "hand"
    assert status.structured_content["counts"] == {"done": 1, "open": 2}
    assert status.structured_content["outside"]["checkboxes"] == 2
    assert status.structured_content["outside"]["checked"] == 1
    assert status.structured_content["summary"].startswith("1 of 3 items done (33%)")
    rewritten = path.read_text(encoding="utf-8")
    assert rewritten.endswith("## My notes\n\n- [x] talked to design\n- [ ] book the room\n")
    assert "- [ ] 📌 **Write the retro notes** 🟡 <!-- wk:2026-W24-4 -->" in rewritten
    assert "- [x] ✅ **Fix Safari login**" in rewritten


async def test_sync_copies_unchecked_progress_items_typed_and_prioritised(call, root):
    (root / "current.md").write_text(CURRENT, encoding="utf-8")

    preview = await call("dokoro_weekly_sync", dry_run=True)
    found = {c["title"]: (c["type"], c["priority"]) for c in preview.structured_content["found"]}
    assert found == {
        "Fix crash on save when the disk is full (urgent)": ("issue", "critical"),
        "Implement CSV export": ("feature", "medium"),
        "Write the release notes": ("task", "medium"),
    }
    assert preview.structured_content["added"] == []
    assert not (root / "currentWeek.md").exists()

    synced = await call("dokoro_weekly_sync")
    assert len(synced.structured_content["added"]) == 3
    again = await call("dokoro_weekly_sync")
    assert again.structured_content["added"] == []
    assert len(again.structured_content["already_listed"]) == 3


async def test_status_carries_open_items_over_and_counts_task_time(call, clock):
    await call("dokoro_weekly_add_item", type="task", title="Left open")
    await call("dokoro_task_track", action="start", title="Pairing")
    clock.advance(timedelta(days=7))

    status = await call("dokoro_weekly_status", include_time=True)
    assert status.structured_content["week"] == "2026-W25"
    assert status.structured_content["items"] == []
    assert [i["title"] for i in status.structured_content["carried_over"]] == ["Left open"]
    assert "carried over" in status.structured_content["summary"]
    time = status.structured_content["time"]
    assert time is not None and time["tasks_completed"] == 0


@pytest.mark.parametrize(
    ("moment", "week"),
    [
        (datetime(2025, 12, 29, 9, tzinfo=UTC), "2026-W01"),  # a Monday of December in ISO week-year 2026
        (datetime(2027, 1, 1, 9, tzinfo=UTC), "2026-W53"),  # a Friday of January in ISO week-year 2026
    ],
)
async def test_weeks_are_named_by_the_iso_week_year(call, clock, moment, week):
    clock.set(moment)
    added = await call("dokoro_weekly_add_item", type="task", title="New year")
    assert added.structured_content["item"]["week"] == week


async def test_bad_weekly_arguments_are_error_results(fail):
    assert "type" in await fail("dokoro_weekly_add_item", type="epic", title="x")
    assert "title must not be empty" in await fail("dokoro_weekly_add_item", type="task", title=" ")


async def test_renaming_a_line_to_another_items_title_is_refused_not_a_crash(call, root):
    await call("dokoro_weekly_add_item", type="task", title="Alpha")
    await call("dokoro_weekly_add_item", type="task", title="Beta")
    path = root / "currentWeek.md"
    path.write_text(path.read_text(encoding="utf-8").replace("**Beta**", "**Alpha**"), encoding="utf-8")

    status = await call("dokoro_weekly_status")
    assert [i["title"] for i in status.structured_content["items"]] == ["Alpha", "Beta"]
    assert status.structured_content["reconciled"][0]["action"] == "refused"
    assert "**Beta**" in path.read_text(encoding="utf-8")
