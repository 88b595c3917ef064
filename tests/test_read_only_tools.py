"""Every tool marked ``readOnlyHint`` writes nothing: neither a database row nor a file of the store.
Nor does reading a resource or getting a prompt.

Clients auto-approve read-only tools, so the hint is a promise. The tools are enumerated from the
unified server with the bridge flag on, so a tool added later is held to the rule without anyone
editing this file; a read-only tool needs an argument recipe in :data:`RECIPES` (the test says so).

The store is filled with a bit of everything (a claimed workspace, a session log, questions, an
asset, episodes, memories, plans, coordination rows, feedback, documents, research, a bridge plan,
tracked issues, features, week items and a task timer). Before each call a watched markdown file
is edited by hand and the session summaries lose their embeddings, so a tool that reconciled
workspace markdown, indexed documents or healed vectors would have work to do. Each read-only
tool is then called with valid arguments by a server process of its own, and the test compares,
before and after the call, every row of every table of the database and the path and content hash
of every file of the store folder. Every resource is read and every prompt got the same way.

What is not the tool's write is kept out (see docs/mcp-features.md, "What writes nothing leaves
out"): the kit's outcome capture (one ``agent_feedback`` row per call) is turned off with
``auto_feedback=False``, and the session time tracking counts calls only in the process that
claimed the workspace, which these servers did not. The SQLite file itself is compared through
its rows (pages move on any read).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from dokoro_testkit import MakeClient

if TYPE_CHECKING:
    from dokoro_server import Register, StoreOpener
    from dokoro_store import Store
    from mcp import Client

pytestmark = pytest.mark.anyio

# Arguments of each read-only tool: valid ones that make it read what the fill wrote.
RECIPES: dict[str, dict[str, Any]] = {
    "dokoro_workspace_status": {},
    "dokoro_get_current_focus": {},
    "dokoro_question_list": {"includeAnswered": True},
    "dokoro_question_check": {},
    "dokoro_list_assets": {},
    "dokoro_memory_status": {},
    "dokoro_memory_review": {"limit": 10},
    "dokoro_briefing": {"focus": "login sessions"},
    "dokoro_entity_graph": {"query": "PostgreSQL"},
    "dokoro_plan_status": {},
    "dokoro_plan_list": {},
    "dokoro_context_last": {"limit": 5},
    "dokoro_context_search": {"query": "compaction"},
    "dokoro_feedback_query": {},
    "dokoro_feedback_route": {"min_samples": 1},
    "dokoro_presence_list": {},
    "dokoro_claim_list": {"include_expired": True},
    "dokoro_shared_note_read": {},
    "dokoro_block_read": {"block_key": "release-checklist"},
    "dokoro_block_list": {},
    "test_connection": {},
    "dokoro_issue_list": {},
    "dokoro_feature_list": {},
    "dokoro_weekly_status": {"include_time": True, "include_summary": True},
    "dokoro_task_list": {},
    "dokoro_handoff_inbox": {},
    "search_status": {},
    "search_dokoros": {"query": "session"},
    "list_recent_dokoros": {"days": 30},
}

# Arguments of each prompt, and the URI each resource template is read at ({plan} = a plan's id).
PROMPT_RECIPES: dict[str, dict[str, str]] = {
    "resume-session": {"task": "login sessions"},
    "onboard-project": {"focus": "testing"},
    "end-session": {},
    "plan-feature": {"feature": "session refresh dashboard", "context": "PostgreSQL only"},
}
TEMPLATE_RECIPES: dict[str, str] = {"dokoro://plans/{id}": "dokoro://plans/{plan}"}

# Written by hand before each call: reconciling workspace markdown would index it.
HAND_EDITED = "decisions/2026-06-10-session-refresh-timeout.md"


@pytest.fixture
def registers() -> Sequence[Register]:
    from dokoro.server import registers
    from dokoro_server import DokoroSettings

    return registers(DokoroSettings(enable_tachibot_bridge=True))


def _overrides() -> dict[str, Any]:
    return {"auto_feedback": False, "enable_tachibot_bridge": True}


async def _read_resource(client: Client, uri: str) -> None:
    contents = (await client.read_resource(uri)).contents
    assert contents and getattr(contents[0], "text", ""), f"{uri} read empty"


async def _get_prompt(client: Client, name: str, arguments: dict[str, str]) -> None:
    assert (await client.get_prompt(name, arguments)).messages, f"prompt {name} has no message"


async def _ok(client: Client, name: str, **arguments: Any) -> Any:
    outcome = await client.call_tool(name, arguments)
    text = getattr(outcome.content[0], "text", "") if outcome.content else ""
    assert not outcome.is_error, f"{name} failed: {text}"
    return outcome.structured_content


async def _fill(client: Client, cwd: Path) -> str:
    """A bit of every kind of data, written through the tools; returns a plan's id."""
    await _ok(client, "dokoro_init")
    await _ok(client, "dokoro_workspace_claim", task="Fix the flaky login test", tags={"area": "auth"})
    await _ok(client, "dokoro_session_log", entry="Reproduced the race with two tabs", type="issue")
    await _ok(client, "dokoro_update_current_section", section="Notes", content="Sessions refresh in a worker.")
    question = await _ok(client, "dokoro_question_add", question="Which worker refreshes sessions?", priority="high")
    await _ok(client, "dokoro_question_add", question="Do we keep the old cookie?")
    await _ok(
        client, "dokoro_question_answer", id=question["question"]["id"], answer="The one holding the advisory lock."
    )
    (cwd / "trace.txt").write_text("GET /login 500\n", encoding="utf-8")
    await _ok(client, "dokoro_save_file", source=str(cwd / "trace.txt"), category="data", description="a trace")
    await _ok(
        client,
        "dokoro_session_summary_add",
        session_id="2026-06-09-login",
        ai_model="claude-opus-4-7",
        summary="Found the session refresh race between two workers; no fix yet.",
        key_topics=["sessions"],
    )
    await _ok(
        client,
        "dokoro_remember",
        type="decision",
        title="Sessions are refreshed under an advisory lock",
        body="One worker refreshes sessions while holding a PostgreSQL advisory lock; the others wait.",
        entities=["PostgreSQL", "sessions"],
    )
    await _ok(
        client, "dokoro_remember", type="fact", title="CI runs on two cores", body="The CI machines have two cores."
    )
    plan = await _ok(
        client, "dokoro_plan_create", title="Fix login", items=["Reproduce the race", "Fix session refresh"]
    )
    await _ok(client, "dokoro_plan_check", itemIndex=1, notes="two tabs")
    await _ok(client, "dokoro_plan_blocker", itemIndex=2, blocker="waiting for the lock review")
    event = {
        "event": "context_inspect",
        "sessionId": "2026-06-10-login",
        "turn": 1,
        "timestamp": "2026-06-10T22:00:00Z",
        "totalEstimate": 300,
        "layers": [{"name": "rules", "reason": "always on", "tokenEstimate": 100, "contentSnippet": "compaction"}],
    }
    await _ok(client, "dokoro_context_log", event=event)
    await _ok(client, "dokoro_feedback_record", tool_name="search_universal", outcome="success", latency_ms=12)
    await _ok(client, "dokoro_feedback_record", tool_name="search_universal", outcome="failure", error_message="x")
    await _ok(client, "dokoro_presence_ping", agent_id="alice", current_focus="login")
    await _ok(client, "dokoro_file_claim", paths=["src/auth/session.py"], agent_id="alice", intent="fix refresh")
    await _ok(client, "dokoro_shared_note_append", content="The lock is released at commit.", note_type="decision")
    await _ok(client, "dokoro_block_write", block_key="release-checklist", content="- run the login tests")
    await _ok(client, "dokoro_handoff_write", summary="Refresh fix half done", from_agent="alice", to_agent="bob")
    await _ok(
        client,
        "search_index_content",
        doc_id="adr-012-sessions",
        title="ADR 012: sessions",
        content="Sessions are refreshed by one worker holding a PostgreSQL advisory lock.",
    )
    await _ok(
        client,
        "dokoro_capture_research",
        topic="advisory locks",
        findings="pg_advisory_xact_lock is released at commit.",
        sources=["https://www.postgresql.org/docs/current/explicit-locking.html"],
    )
    await _ok(
        client,
        "bridge_index_research",
        source="perplexity_ask",
        query="advisory locks",
        content="A crashed worker leaves no advisory lock behind.",
    )
    await _ok(client, "bridge_import_plan", title="Harden sessions", phases=["Review the lock", "Ship"])
    await _ok(client, "dokoro_plan_feature", feature="session refresh dashboard", approach="plan_only")
    await _ok(client, "dokoro_issue_add", title="Login fails after a refresh", category="bug", priority="high")
    await _ok(client, "dokoro_feature_add", title="Session refresh dashboard", complexity="moderate")
    await _ok(client, "dokoro_weekly_add_item", type="task", title="Review the lock change")
    await _ok(client, "dokoro_task_track", action="start", title="Fix session refresh")
    await _ok(client, "dokoro_workspace_dump", reason="checkpoint", keepActive=True)
    await _ok(client, "search_universal", query="sessions")  # the fill leaves the index up to date
    return str(plan["id"])


def _settle(openers: list[StoreOpener]) -> None:
    """Finish what each live server's store does behind its writes, now: the catch-up a store
    opening starts on summaries and documents left without vectors (its write-behind sweep), which
    under load could otherwise run in the middle of the read being watched."""
    for opener in openers:
        if opener.ready:
            opened = opener.store()
            opened.episodic.embed_written()
            opened.docs.embed_written()


def _leave_work_to_do(store: Store, root: Path, tool: str) -> None:
    """What a tool that writes as it reads would write: a hand-edited watched markdown file (not
    yet indexed) and session summaries without embeddings (as when no embedder was available)."""
    from sqlalchemy import text

    (root / HAND_EDITED).parent.mkdir(parents=True, exist_ok=True)
    (root / HAND_EDITED).write_text(f"# Notes\n\nThe session refresh worker needs a timeout ({tool}).\n", "utf-8")
    with store.db.engine.begin() as connection:
        connection.execute(text("UPDATE conversation_summaries SET embedding = NULL, embedder = NULL"))


def _rows(store: Store) -> dict[str, list[str]]:
    """Every row of every table (virtual and shadow tables included), as sorted reprs."""
    from sqlalchemy import inspect, text

    engine = store.db.engine
    dump: dict[str, list[str]] = {}
    with engine.connect() as connection:
        for table in sorted(inspect(connection).get_table_names()):
            quoted = connection.dialect.identifier_preparer.quote(table)
            rows = connection.execute(text(f"SELECT * FROM {quoted}")).all()
            dump[table] = sorted(repr(tuple(row)) for row in rows)
    return dump


def _files(root: Path, database: Path | None) -> dict[str, str]:
    """Path -> SHA-256 of every file of the store folder (the SQLite files are compared by rows)."""
    skip = set()
    if database is not None:
        skip = {database, *(database.with_name(database.name + suffix) for suffix in ("-wal", "-shm", "-journal"))}
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path not in skip
    }


def _difference(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    changed = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            changed.append(f"{key}: removed")
        elif key not in before:
            changed.append(f"{key}: added")
        elif before[key] != after[key]:
            detail = ""
            if isinstance(before[key], list):
                gone, new = set(before[key]) - set(after[key]), set(after[key]) - set(before[key])
                detail = f" (-{len(gone)} +{len(new)} rows; e.g. {sorted(new or gone)[0][:100]})"
            changed.append(f"{key}: changed{detail}")
    return changed


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_a_tool_marked_read_only_writes_nothing_to_the_database_or_the_store_folder(
    make_client: MakeClient,
    store: Store,
    root: Path,
    cwd: Path,
    flush_servers: Callable[[], None],
    _live_openers: list[StoreOpener],
) -> None:
    database = store.paths.sqlite_file if store.db.engine.dialect.name == "sqlite" else None
    async with make_client(**_overrides()) as client:
        plan_id = await _fill(client, cwd)
        read_only = sorted(
            tool.name
            for tool in (await client.list_tools()).tools
            if tool.annotations is not None and tool.annotations.read_only_hint
        )
        resources = [resource.uri for resource in (await client.list_resources()).resources]
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]

    missing = [name for name in read_only if name not in RECIPES]
    missing += [f"prompt {name}" for name in prompts if name not in PROMPT_RECIPES]
    missing += [f"template {uri}" for uri in templates if uri not in TEMPLATE_RECIPES]
    assert not missing, f"no argument recipe in {__file__} for: {missing}"
    stale = sorted(set(RECIPES) - set(read_only))
    assert not stale, f"RECIPES names tools that are not marked read-only (remove them): {stale}"

    # Resources and prompts are read-only too: reading one never writes.
    reads: list[tuple[str, Callable[[Client], Awaitable[Any]]]] = [
        (name, functools.partial(_ok, name=name, **RECIPES[name])) for name in read_only
    ]
    for uri in [*resources, *(TEMPLATE_RECIPES[t].format(plan=plan_id) for t in templates)]:
        reads.append((f"resource {uri}", functools.partial(_read_resource, uri=uri)))
    for name in prompts:
        reads.append((f"prompt {name}", functools.partial(_get_prompt, name=name, arguments=PROMPT_RECIPES[name])))

    violations: dict[str, list[str]] = {}
    for what, read in reads:
        async with make_client(**_overrides()) as client:
            _settle(_live_openers)  # the server's own catch-up at open is not the read's doing
            _leave_work_to_do(store, root, what)
            flush_servers()
            rows, files = _rows(store), _files(root, database)
            await read(client)
            flush_servers()
            changed = _difference(rows, _rows(store)) + _difference(files, _files(root, database))
        if changed:
            violations[what] = changed
    assert violations == {}, "read-only tools, resources or prompts wrote to the store:\n" + "\n".join(
        f"  {name}: {'; '.join(changes[:4])}{' …' if len(changes) > 4 else ''}" for name, changes in violations.items()
    )
