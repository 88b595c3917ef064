"""Issue tools through the MCP client, on SQLite and PostgreSQL: rows, renderings, hand edits."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_an_issue_is_found_by_the_id_its_add_returned_through_its_whole_life(call, root):
    added = await call(
        "dokoro_issue_add", title="Login button does nothing on Safari", priority="high", description="Tap it: nothing."
    )
    issue = added.structured_content["item"]
    assert issue["id"] == "2026-06-10-22h23-wednesday"
    assert issue["status"] == "pending"
    pending = root / added.structured_content["path"]
    assert pending.parent == root / "tracking" / "issues" / "pending"
    assert pending.name == "2026-06-10-22h23-wednesday-login-button-does-nothing-on.md"
    assert 'issue_id: "2026-06-10-22h23-wednesday"' in pending.read_text(encoding="utf-8")
    assert "Issue Added" in added.content[0].text

    # §7.13: the original looked up `<id>.md`, which never matched `<id>-<title words>.md`.
    worked = await call("dokoro_issue_work", issue_id=issue["id"])
    assert worked.structured_content["previous_status"] == "pending"
    assert worked.structured_content["item"]["status"] == "active"
    active = root / worked.structured_content["path"]
    assert active.parent.name == "active" and active.exists() and not pending.exists()

    done = await call("dokoro_issue_complete", issue_id=active.name, solution="Bound the click handler on touchend.")
    item = done.structured_content["item"]
    assert item["status"] == "resolved" and item["solution"] == "Bound the click handler on touchend."
    resolved = root / done.structured_content["path"]
    text = resolved.read_text(encoding="utf-8")
    assert "## Solution\n\nBound the click handler on touchend." in text
    assert "resolved (active → resolved) by alice" in text
    assert [e["action"] for e in item["history"]] == ["added", "started", "resolved"]
    assert sorted(p.name for p in (root / "tracking" / "issues").rglob("*.md")) == [resolved.name]


async def test_wrong_transitions_and_unknown_ids_are_error_results_that_say_what_to_do(call, fail):
    issue = (await call("dokoro_issue_add", title="Crash on save")).structured_content["item"]["id"]
    await call("dokoro_issue_complete", issue_id=issue, solution="null check")

    again = await fail("dokoro_issue_complete", issue_id=issue, solution="twice")
    assert f"issue {issue} is already resolved" in again
    unknown = await fail("dokoro_issue_work", issue_id="2020-01-01-00h00-wednesday")
    assert "No issue with id '2020-01-01-00h00-wednesday'" in unknown and issue in unknown
    assert "dokoro_issue_list" in unknown
    empty = await fail("dokoro_issue_complete", issue_id=issue, solution="  ")
    assert "solution must not be empty" in empty
    wrong_kind = await fail("dokoro_feature_start", feature_id=issue)
    assert "is an issue, not a feature; use the dokoro_issue_* tools" in wrong_kind

    # Work on a resolved issue reopens it; working on it again is refused.
    reopened = await call("dokoro_issue_work", issue_id=issue)
    assert reopened.structured_content["action"] == "reopened"
    assert "Issue Reopened" in reopened.content[0].text
    twice = await fail("dokoro_issue_work", issue_id=issue)
    assert "already active" in twice


async def test_bad_arguments_are_refused_before_anything_is_written(fail, root):
    message = await fail("dokoro_issue_add", title="x", category="typo")
    assert "category" in message
    assert "limit" in await fail("dokoro_issue_list", limit=0)
    assert "title must not be empty" in await fail("dokoro_issue_add", title="   ")
    assert not (root / "tracking" / "issues" / "pending").exists() or not any(
        (root / "tracking" / "issues" / "pending").iterdir()
    )


async def test_issues_list_critical_first_then_newest_with_counts_per_status(call, clock):
    from datetime import timedelta

    await call("dokoro_issue_add", title="Old medium")
    clock.advance(timedelta(minutes=5))
    await call("dokoro_issue_add", title="Critical one", priority="critical")
    clock.advance(timedelta(minutes=5))
    newest = await call("dokoro_issue_add", title="New medium")
    await call("dokoro_issue_work", issue_id=newest.structured_content["item"]["id"])

    listed = await call("dokoro_issue_list")
    assert [i["title"] for i in listed.structured_content["items"]] == ["Critical one", "New medium", "Old medium"]
    assert listed.structured_content["counts"] == {"pending": 2, "active": 1, "resolved": 0, "archived": 0}
    active = await call("dokoro_issue_list", status="active")
    assert [i["title"] for i in active.structured_content["items"]] == ["New medium"]
    limited = await call("dokoro_issue_list", limit=1)
    assert limited.structured_content["matching"] == 3 and len(limited.structured_content["items"]) == 1
    assert "2 more" in limited.content[0].text


async def test_two_issues_in_one_minute_get_distinct_ids(call):
    first = (await call("dokoro_issue_add", title="A")).structured_content["item"]["id"]
    second = (await call("dokoro_issue_add", title="B")).structured_content["item"]["id"]
    assert second == first + "-2"


async def test_a_hand_edit_of_a_rendering_is_read_back_into_the_row(call, root):
    added = await call("dokoro_issue_add", title="Slow search", description="Takes 4 s.")
    path = root / added.structured_content["path"]
    text = path.read_text(encoding="utf-8")
    text = text.replace('priority: "medium"', 'priority: "critical"')
    text = text.replace("Takes 4 s.", "Takes 4 s on a cold cache; 40 ms warm.")
    text += "\n## Ideas\n\nCache the embedder.\n"
    path.write_text(text, encoding="utf-8")

    listed = await call("dokoro_issue_list")
    item = listed.structured_content["items"][0]
    assert item["priority"] == "critical"
    assert item["description"] == "Takes 4 s on a cold cache; 40 ms warm."
    notes = listed.structured_content["reconciled"]
    assert notes[0]["action"] == "applied" and "priority" in notes[0]["detail"]
    assert "Hand edits read back first" in listed.content[0].text
    rendered = (root / item["path"]).read_text(encoding="utf-8")
    assert "## Ideas\n\nCache the embedder." in rendered  # a section dokoro does not know is kept
    assert "edited by hand" in rendered

    quiet = await call("dokoro_issue_list")  # nothing changed since: nothing to read back
    assert quiet.structured_content["reconciled"] == []


async def test_moving_a_rendering_to_another_status_folder_changes_the_status_by_the_rules(call, root):
    added = await call("dokoro_issue_add", title="Typo in footer")
    pending = root / added.structured_content["path"]
    active = root / "tracking" / "issues" / "active" / pending.name
    pending.rename(active)

    listed = await call("dokoro_issue_list")
    assert listed.structured_content["items"][0]["status"] == "active"
    assert listed.structured_content["reconciled"][0]["action"] == "moved"
    assert active.exists() and not pending.exists()

    issue = listed.structured_content["items"][0]["id"]
    await call("dokoro_issue_complete", issue_id=issue, solution="fixed")
    resolved = root / "tracking" / "issues" / "resolved" / pending.name
    archived_back = root / "tracking" / "issues" / "pending" / pending.name
    resolved.rename(archived_back)  # resolved → pending is not a transition the rules allow

    again = await call("dokoro_issue_list")
    assert again.structured_content["items"][0]["status"] == "resolved"
    note = again.structured_content["reconciled"][0]
    assert note["action"] == "refused" and "cannot go to pending" in note["detail"]
    assert resolved.exists() and not archived_back.exists()


async def test_an_edit_that_cannot_be_read_back_is_kept_in_conflicts_not_lost(call, root):
    added = await call("dokoro_issue_add", title="Broken yaml")
    path = root / added.structured_content["path"]
    broken = path.read_text(encoding="utf-8").replace('title: "Broken yaml"', "title: [unclosed")
    path.write_text(broken, encoding="utf-8")

    listed = await call("dokoro_issue_list")
    note = listed.structured_content["reconciled"][0]
    assert note["action"] == "kept"
    copies = list((root / "tracking" / "conflicts").glob("*.md"))
    assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == broken
    assert 'title: "Broken yaml"' in path.read_text(encoding="utf-8")  # the rendering shows the row again


async def test_secrets_in_what_an_agent_writes_are_redacted_before_storing(call, root):
    added = await call(
        "dokoro_issue_add", title="Deploy fails", description="CI log: password=hunter2hunter2 then exit 1"
    )
    assert added.structured_content["redacted"] == ["password"]
    assert "redacted 1 secret" in added.content[0].text
    assert "hunter2" not in (root / added.structured_content["path"]).read_text(encoding="utf-8")


async def test_issues_are_team_wide_another_agent_works_and_resolves_one_under_its_own_name(connect):
    # docs/team.md: tracking rows carry no owner wall; every step is recorded under the caller.
    async with connect("alice") as alice, connect("bob") as bob:
        added = await alice.call_tool("dokoro_issue_add", {"title": "Export times out on big accounts"})
        issue_id = added.structured_content["item"]["id"]
        worked = await bob.call_tool("dokoro_issue_work", {"issue_id": issue_id})
        done = await bob.call_tool("dokoro_issue_complete", {"issue_id": issue_id, "solution": "Stream the rows."})

    assert not worked.is_error and not done.is_error
    item = done.structured_content["item"]
    assert (item["agent_id"], item["status"]) == ("alice", "resolved")  # the reporter stays the reporter
    assert [(e["action"], e["agent_id"]) for e in item["history"]] == [
        ("added", "alice"),
        ("started", "bob"),
        ("resolved", "bob"),
    ]
