"""``dokoro browse`` through Textual's Pilot: every category, filter, sort, search, each action and
its confirmation, help, and live refresh after writes by another process. On SQLite and PostgreSQL
where the store matters."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from dokoro.browse import data
from dokoro.browse.app import BrowseApp
from dokoro.browse.screens import ConfirmScreen, HelpScreen, ItemsScreen, PreviewScreen
from dokoro_store import Store
from dokoro_store.models import AgentPresence
from dokoro_testkit.pilot import ask, labels, open_category, select, until
from sqlalchemy import update

pytestmark = pytest.mark.anyio

SIZE = (100, 30)
EXPECTED = {
    "current": ["current.md"],
    "daily": ["2026-06-11-09h00-thursday-session-login.md", "2026-06-02-09h00-tuesday-session-cache.md"],
    "weekly": ["2026-W22-consolidated.md"],
    "archive": ["2026-05-20-09h00-wednesday-session-old.md", "Old spike"],
    "plans": ["Tidy the cache", "Ship the login fix", "Old spike"],
    "claims": ["src/auth/session.ts"],
    "agents": [],
    "questions": ["Is the token cache safe across tabs?", "Which test runner?"],
    "feedback": ["failure · dokoro_plan_check", "success · dokoro_search"],
    "entities": ["login-api", "auth"],
    "sweep": ["Archive sweep status"],
    "memories": ["The API uses JWT", "Run the tests before a commit"],
    "stale": [],
    "proposals": [],
    "tracking": ["Login fails after a token refresh", "Offline mode"],
    "sessions": [],
}


def test_every_category_is_known_with_its_expected_items():
    assert [c.id for c in data.CATEGORIES] == list(EXPECTED)


@pytest.mark.parametrize("category", list(EXPECTED))
async def test_each_category_lists_its_items(world, category):
    app = BrowseApp(world, category=category, poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, category)
        if category in ("entities", "memories", "tracking"):  # same timestamps (frozen clock): order by id
            assert sorted(labels(app)) == sorted(EXPECTED[category])
        else:
            assert labels(app) == EXPECTED[category]


async def test_categories_show_counts_and_enter_opens_one(sqlite_world):
    app = BrowseApp(sqlite_world, poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(app.screen.summaries) == len(data.CATEGORIES))
        counts = {s.id: s.count for s in app.screen.summaries}
        assert counts["daily"] == 2 and counts["questions"] == 1 and counts["agents"] == 0
        await pilot.press("down", "enter")
        await open_category(pilot, app, "daily")
        await pilot.press("escape")
        assert type(app.screen).__name__ == "CategoriesScreen"


async def test_an_unknown_start_category_says_so(sqlite_world):
    app = BrowseApp(sqlite_world, category="nope", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: any(m.startswith("unknown category 'nope'; the categories are") for m in app.messages)
        )


async def test_a_file_preview_renders_markdown_and_goes_back(sqlite_world):
    app = BrowseApp(sqlite_world, category="daily", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "daily")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set())
        assert [line.plain for line in app.screen.lines] == [
            "Session: login race",
            "",
            "• found the race in token refresh",
        ]
        await pilot.press("left")
        assert isinstance(app.screen, ItemsScreen)


async def test_a_row_preview_is_a_card(world):
    app = BrowseApp(world, category="claims", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "claims")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set())
        text = "\n".join(line.plain for line in app.screen.lines)
        assert "Claim: src/auth/session.ts" in text and "Owner: claude" in text and "Intent: fix" in text


async def test_the_filter_narrows_as_you_type_keeps_on_enter_and_clears_on_escape(sqlite_world):
    app = BrowseApp(sqlite_world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "plans")
        await pilot.press("slash", "l", "o", "g", "i", "n")
        assert labels(app) == ["Ship the login fix"]
        await pilot.press("q")  # typed, not quit
        assert app.is_running and app.filters["plans"] == "loginq"
        await pilot.press("backspace", "enter")
        assert app.screen.typing is None and labels(app) == ["Ship the login fix"]
        await pilot.press("escape")  # first escape clears the filter
        assert labels(app) == EXPECTED["plans"]
        await pilot.press("slash", "z", "z", "z", "escape")
        assert labels(app) == EXPECTED["plans"] and app.filters["plans"] == ""


async def test_the_filter_is_remembered_per_category(sqlite_world):
    app = BrowseApp(sqlite_world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "plans")
        await pilot.press("slash", "c", "a", "c", "h", "e", "enter", "left")
        await pilot.press("enter")  # categories cursor is still on the first category: current
        await open_category(pilot, app, "current")
        await pilot.press("escape")
        for _ in range(4):
            await pilot.press("down")
        await pilot.press("enter")
        await open_category(pilot, app, "plans")
        assert labels(app) == ["Tidy the cache"]


async def test_sort_cycles_reverse_then_by_name_then_back(sqlite_world):
    app = BrowseApp(sqlite_world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "plans")
        await pilot.press("o")
        assert labels(app) == list(reversed(EXPECTED["plans"]))
        await pilot.press("o")
        assert labels(app) == ["Old spike", "Ship the login fix", "Tidy the cache"]
        await pilot.press("o")
        assert labels(app) == EXPECTED["plans"]


async def test_semantic_search_replaces_the_list_and_escape_restores_it(sqlite_world):
    sqlite_world.markdown.import_markdown()
    app = BrowseApp(sqlite_world, category="weekly", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "weekly")
        await pilot.press("s", *"token refresh race", "enter")
        await until(pilot, lambda: app.screen.snapshot is not None)
        assert labels(app)[0] == "Session: login race"
        assert app.screen.shown[0].path is not None  # openable as a file
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set())
        await pilot.press("escape", "escape")
        assert labels(app) == EXPECTED["weekly"]


async def test_a_slow_search_says_so_and_a_newer_query_runs_when_it_ends(sqlite_world, monkeypatch):
    gate = threading.Event()  # the first search answers only when the test says so: however slow
    asked: list[str] = []

    def slow(_store, query):
        asked.append(query)
        if query == "x":
            gate.wait()
        return [data.Item(id=f"search:{query}", label=f"found {query}", sublabel="", kind="search")]

    monkeypatch.setattr("dokoro.browse.screens.search_items", slow)
    app = BrowseApp(sqlite_world, category="weekly", poll_seconds=0.1)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await open_category(pilot, app, "weekly")
            await pilot.press("s", "x", "enter")
            await until(pilot, lambda: asked == ["x"])
            status = str(app.screen.query_one("#status").render())
            assert "searching for 'x'" in status and "esc drops it" in status
            await pilot.press("s", "y", "enter")  # typed while x runs: y runs when x ends
            await until(pilot, lambda: any("'y' runs when it ends" in m for m in app.messages))
            assert labels(app) == EXPECTED["weekly"]
            gate.set()
            await until(pilot, lambda: app.screen.snapshot is not None)
            assert asked == ["x", "y"] and labels(app) == ["found y"]  # x's late answer is not shown
    finally:
        gate.set()


async def test_a_failed_search_says_why_and_the_next_one_runs_at_once(sqlite_world, monkeypatch):
    answers = iter([RuntimeError("the index is being rebuilt"), ["ok"]])

    def flaky(_store, query):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return [data.Item(id="search:ok", label="found it", sublabel="", kind="search")]

    monkeypatch.setattr("dokoro.browse.screens.search_items", flaky)
    app = BrowseApp(sqlite_world, category="weekly", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "weekly")
        await pilot.press("s", "x", "enter")
        await until(pilot, lambda: "search failed: the index is being rebuilt" in app.messages)
        assert labels(app) == EXPECTED["weekly"]
        await pilot.press("s", "x", "enter")  # no cooling down: a person may retry at once
        await until(pilot, lambda: app.screen.snapshot is not None)
        assert labels(app) == ["found it"]


async def test_escape_drops_a_running_search(sqlite_world, monkeypatch):
    gate = threading.Event()

    def slow(_store, _query):
        gate.wait()
        return [data.Item(id="search:late", label="late", sublabel="", kind="search")]

    monkeypatch.setattr("dokoro.browse.screens.search_items", slow)
    app = BrowseApp(sqlite_world, category="weekly", poll_seconds=0.1)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await open_category(pilot, app, "weekly")
            await pilot.press("s", "x", "enter")
            await until(pilot, lambda: app.screen.searching == "x")
            await pilot.press("escape")
            assert "search for 'x' dropped" in app.messages
            gate.set()
            await until(pilot, lambda: app.screen.searching is None)
            assert app.screen.snapshot is None and labels(app) == EXPECTED["weekly"]
            assert isinstance(app.screen, ItemsScreen)  # the escape left the screen where it was
    finally:
        gate.set()


async def test_help_opens_on_question_mark_and_any_key_closes_it(sqlite_world):
    app = BrowseApp(sqlite_world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "plans")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("x")
        assert isinstance(app.screen, ItemsScreen) and app.is_running


async def test_ctrl_c_and_q_quit(sqlite_world):
    app = BrowseApp(sqlite_world, poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
    assert not app.is_running
    other = BrowseApp(sqlite_world, poll_seconds=0.1)
    async with other.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
    assert not other.is_running


async def test_no_color_turns_the_app_monochrome(sqlite_world, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = BrowseApp(sqlite_world, poll_seconds=0.1)
    async with app.run_test(size=SIZE):
        assert app.no_color


# ---------------------------------------------------------------------- actions and confirmations
async def confirm(pilot, app, key: str, answer: str) -> str:
    prompt = await ask(pilot, app, key)
    await pilot.press("j", "question_mark")  # swallowed: still asking
    assert isinstance(app.screen, ConfirmScreen)
    await pilot.press(answer)
    return prompt


OLD_DAILY = "2026-06-02-09h00-tuesday-session-cache.md"
NEW_DAILY = "2026-06-11-09h00-thursday-session-login.md"


async def test_archiving_a_daily_file_asks_and_undo_brings_it_back(world):
    root = world.paths.root
    app = BrowseApp(world, category="daily", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "daily")
        await select(pilot, app, OLD_DAILY)
        assert "Archive" in await confirm(pilot, app, "a", "n")
        await until(pilot, lambda: "cancelled" in app.messages)
        assert (root / "daily" / OLD_DAILY).is_file()

        await confirm(pilot, app, "w", "y")
        await until(pilot, lambda: labels(app) == [NEW_DAILY])
        assert (root / "archive" / "daily" / "2026-W23" / OLD_DAILY).is_file()

        assert "Undo archive" in await confirm(pilot, app, "u", "y")
        await until(pilot, lambda: OLD_DAILY in labels(app))
        assert (root / "daily" / OLD_DAILY).is_file() and app.last_undo is None
        await pilot.press("u")
        assert app.messages[-1] == "nothing to undo"


async def test_a_current_week_daily_file_needs_a_second_confirmation(sqlite_world):
    root = sqlite_world.paths.root
    app = BrowseApp(sqlite_world, category="daily", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "daily")
        await select(pilot, app, NEW_DAILY)
        await confirm(pilot, app, "a", "y")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "CURRENT WEEK" in app.screen.prompt
        await pilot.press("y")
        await until(pilot, lambda: NEW_DAILY not in labels(app))
        assert (root / "archive" / "daily" / "2026-W24" / NEW_DAILY).is_file()


async def test_archiving_and_advancing_plans_with_undo(world):
    app = BrowseApp(world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "plans")
        await select(pilot, app, "Ship the login fix")
        assert "active → completed" in await confirm(pilot, app, "p", "y")
        await until(pilot, lambda: any("plan active → completed" in m for m in app.messages))
        await until(pilot, lambda: "[completed]" in app.screen.shown[labels(app).index("Ship the login fix")].sublabel)
        await pilot.press("p")
        assert app.messages[-1] == "no step forward from completed"

        await confirm(pilot, app, "a", "y")
        await until(pilot, lambda: any(i.archived for i in app.screen.shown if i.label == "Ship the login fix"))
        await select(pilot, app, "Old spike")
        await pilot.press("a")
        assert app.messages[-1] == "already archived"
        await pilot.press("p")
        assert app.messages[-1] == "plan is archived (read-only)"
        await confirm(pilot, app, "u", "y")
        await until(pilot, lambda: not any(i.archived for i in app.screen.shown if i.label == "Ship the login fix"))
    assert world.plans.list()[0].archived is False


async def test_keys_that_do_not_apply_say_so(sqlite_world):
    app = BrowseApp(sqlite_world, category="questions", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "questions")
        for key, message in (("a", "not archivable"), ("w", "w archives daily files only"), ("r", "r releases")):
            await pilot.press(key)
            assert app.messages[-1].startswith(message)
        await pilot.press("p", "f")
        assert app.messages[-2:] == ["p advances plans only", "f forgets memories only"]


async def test_a_live_holders_claim_is_not_released_but_a_stale_one_is(world):
    world.coord.presence.ping("claude")
    app = BrowseApp(world, category="claims", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "claims")
        await confirm(pilot, app, "r", "y")
        await until(pilot, lambda: "holder is live — not releasing" in app.messages)
        with world.db.write() as session:
            session.execute(update(AgentPresence).values(last_heartbeat=AgentPresence.last_heartbeat - 901))
        await until(pilot, lambda: "holder stale" in app.screen.shown[0].sublabel)
        await confirm(pilot, app, "r", "y")
        await until(pilot, lambda: labels(app) == [])
        assert "released claim: src/auth/session.ts" in app.messages


async def test_forgetting_a_memory_deprecates_it(world):
    app = BrowseApp(world, category="memories", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "memories")
        await select(pilot, app, "The API uses JWT")
        await confirm(pilot, app, "f", "y")
        await until(pilot, lambda: any(i.status == "deprecated" for i in app.screen.shown))
        await pilot.press("f")
        assert app.messages[-1] == "already forgotten (deprecated)"
    states = {m.title: m.state for m in world.memories.of_types(["fact"], ("active", "deprecated"))}
    assert states == {"The API uses JWT": "deprecated"}


async def test_approving_and_rejecting_proposed_memories_asks_first(world, database_url, clock):
    with Store.open(world.paths.root, database_url=database_url, clock=clock, memory_review=True) as agents:
        agents.memories.remember(type="fact", title="CI runs on push", body="The CI runs on every push.")
        agents.memories.remember(type="fact", title="Deploys on Friday", body="We deploy on Fridays.")
    app = BrowseApp(world, category="memories", poll_seconds=0.1)

    def state_of(label: str) -> str | None:
        return next((i.status for i in app.screen.shown if i.label == label), None)

    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "memories")
        await select(pilot, app, "The API uses JWT")
        await pilot.press("v", "x")
        assert app.messages[-2:] == [
            "v approves proposed memories only (this one is active)",
            "x rejects proposed memories only (this one is active)",
        ]
        await select(pilot, app, "CI runs on push")
        assert await confirm(pilot, app, "v", "n") == 'Approve memory "CI runs on push" (it becomes active)? y/n'
        await until(pilot, lambda: app.messages[-1] == "cancelled")
        assert state_of("CI runs on push") == "proposed"
        await confirm(pilot, app, "v", "y")
        await until(pilot, lambda: state_of("CI runs on push") == "active")
        await select(pilot, app, "Deploys on Friday")
        assert "Reject" in await confirm(pilot, app, "x", "y")
        await until(pilot, lambda: state_of("Deploys on Friday") == "deprecated")
        assert app.messages[-2:] == ["approved (active): CI runs on push", "rejected (deprecated): Deploys on Friday"]
    states = {m.title: (m.state, m.state_reason) for m in world.memories.of_types(["fact"], ("active", "deprecated"))}
    assert states["CI runs on push"] == ("active", "approved")
    assert states["Deploys on Friday"] == ("deprecated", "rejected in review: rejected in dokoro browse")


EDITOR_SCRIPT = """
import sys
from pathlib import Path
path = Path(sys.argv[-1])
path.write_text(path.read_text(encoding="utf-8").replace(sys.argv[1], sys.argv[2]), encoding="utf-8")
"""


async def test_e_edits_a_memorys_file_and_the_edit_becomes_a_new_version(world, tmp_path):
    script = tmp_path / "fake_editor.py"
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    editor = (sys.executable, str(script), "signed with RS256", "signed with EdDSA")
    app = BrowseApp(world, category="memories", poll_seconds=0.1, editor=editor)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "memories")
        await select(pilot, app, "Run the tests before a commit")
        await pilot.press("e")
        await until(pilot, lambda: app.messages[-1:] == ["no change: Run the tests before a commit"])
        await select(pilot, app, "The API uses JWT")
        await pilot.press("e")
        await until(pilot, lambda: "new version" in app.messages[-1])
        await until(
            pilot,
            lambda: (
                sorted(i.status for i in app.screen.shown if i.label == "The API uses JWT")
                == [
                    "active",
                    "archived",
                ]
            ),
        )
    [new] = world.memories.of_types(["fact"])
    assert (new.trust, new.body) == ("user-stated", "Tokens are JWT, signed with EdDSA.")


async def test_e_says_what_it_edits_and_when_the_editor_is_missing(sqlite_world):
    app = BrowseApp(sqlite_world, category="memories", poll_seconds=0.1, editor=("no-such-editor-here",))
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "memories")
        await pilot.press("e")
        assert app.messages[-1] == "editor 'no-such-editor-here' not found; set $EDITOR"
        await pilot.press("escape")
    app = BrowseApp(sqlite_world, category="questions", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "questions")
        await pilot.press("e")
        assert app.messages[-1] == "e edits memories only"


# ---------------------------------------------------------------------- live refresh
def _other_process(root: Path, database_url: str | None, body: str) -> None:
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from dokoro_store import Store
        with Store.open(Path({str(root)!r}), database_url={database_url!r}) as store:
        """
    ) + textwrap.indent(textwrap.dedent(body), "    ")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


async def test_a_question_added_by_another_process_appears(world, database_url):
    app = BrowseApp(world, category="questions", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "questions")
        _other_process(world.paths.root, database_url, 'store.working.questions.add("Ship on Friday?")\n')
        await until(pilot, lambda: "Ship on Friday?" in labels(app))


async def test_a_daily_file_written_by_another_process_appears_and_the_selection_stays(world, database_url):
    app = BrowseApp(world, category="daily", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "daily")
        await select(pilot, app, OLD_DAILY)
        _other_process(
            world.paths.root,
            database_url,
            'store.paths.daily_dir.joinpath("2026-06-12-09h00-friday-session-new.md").write_text("# New\\n")\n',
        )
        await until(pilot, lambda: len(labels(app)) == 3)
        assert labels(app)[0] == "2026-06-12-09h00-friday-session-new.md"
        assert app.screen.selected().label == OLD_DAILY


async def test_an_open_preview_follows_the_file_and_highlights_changed_lines(sqlite_world):
    path = sqlite_world.paths.daily_dir / NEW_DAILY
    app = BrowseApp(sqlite_world, category="daily", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "daily")
        await pilot.press("enter")
        preview = app.screen
        await until(pilot, lambda: isinstance(preview, PreviewScreen) and preview.loaded.is_set())
        _other_process(
            sqlite_world.paths.root,
            None,
            f'Path({str(path)!r}).write_text("# Session: login race\\n\\n- found the race in **token refresh**\\n'
            f'- fixed it\\n")\n',
        )
        await until(pilot, lambda: preview.pulse == {3})
        assert preview.lines[3].plain == "• fixed it"
        await until(pilot, lambda: preview.pulse == set())


async def test_an_open_card_follows_its_row(world, database_url):
    app = BrowseApp(world, category="questions", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "questions")
        await pilot.press("enter")
        preview = app.screen
        await until(pilot, lambda: isinstance(preview, PreviewScreen) and preview.loaded.is_set())
        question_id = preview.item.ref
        _other_process(world.paths.root, database_url, f'store.working.questions.answer("yes", {question_id!r})\n')
        await until(pilot, lambda: any(line.plain == "yes" for line in preview.lines))
        assert preview.pulse
