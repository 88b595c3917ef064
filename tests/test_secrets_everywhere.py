"""Secrets pushed through every write tool of the unified server come back from nowhere.

Every tool the unified server lists (the tachibot bridge included) is called: the write tools with
arguments carrying well-formed fake credentials of every kind the store recognises, then every
read tool. No raw secret may then appear in any read tool's answer, any file under the store
folder (the SQLite file and the vector index included), any database row, or ``dokoro export``.

The tools are enumerated from the server's own list: a new tool without an argument recipe here
fails the test, so no tool escapes it. Both backends (SQLite and PostgreSQL).

The fake secrets are composed at run time (no scanner sees a live-looking credential in the
repository).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.anyio

# ---------------------------------------------------------------------------------------- secrets
GITHUB = "ghp_" + "Zq8Wm3" * 6
GITHUB_OAUTH = "gho_" + "Pk4Lr9" * 6
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "x7Yq2Lm9Ns4Kp1Bv6Cz3Dw8" * 2
AWS = "AKIA" + "QX7Z" * 4
URL_PASSWORD = "hunter" + "42Zebra"
ENV_PASSWORD = "Tr0ub4" + "dor-3x"
ENV_TOKEN = "svQ9w8E7" + "r6T5y4U3i2"
ENV_KEY = "kY8fP2mQ" + "9zR4tW7x"
SLACK = "xoxb-" + "1234567890" + "-" + "AbCdEfGhIjKl"
STRIPE = "sk_live_" + "Qw3rTy" * 4
GOOGLE = "AIza" + "Sy" + "Xk9" * 11
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiJhZ2VudCJ9" + "." + "c2lnbmF0dXJlLXZhbHVl"
KEY_BODY = "b3BlbnNzaC1rZXk" + "tdjEAAAAABG5vbmU"
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + KEY_BODY + "\nAAAAAAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----"
PROSE_KEY = "Zk8v2QpL0x" + "Wm4RtY7uBn3"

# What must never come back (compared case-insensitively: a slug of a secret is a leak too).
NEEDLES = (
    GITHUB,
    GITHUB_OAUTH,
    GITHUB_PAT,
    AWS,
    URL_PASSWORD,
    ENV_PASSWORD,
    ENV_TOKEN,
    ENV_KEY,
    SLACK,
    STRIPE,
    GOOGLE,
    JWT,
    KEY_BODY,
    PROSE_KEY,
)

SHORT = f"rotate {GITHUB} and postgresql://app:{URL_PASSWORD}@db.example.org:5432/prod"
LINE = (
    f"deploy: token {GITHUB}, oauth {GITHUB_OAUTH}, pat {GITHUB_PAT}, aws {AWS}, "
    f"db postgresql://app:{URL_PASSWORD}@db.example.org:5432/prod, slack {SLACK}, stripe {STRIPE}, "
    f"google {GOOGLE}, jwt {JWT}, the api key is {PROSE_KEY}"
)
TEXT = (
    f'# Deploy notes\n\n{LINE}\n\n```sh\nDB_PASSWORD={ENV_PASSWORD}\nexport SERVICE_TOKEN="{ENV_TOKEN}"\n'
    f"SIGNING_KEY={ENV_KEY}\n```\n\n{PRIVATE_KEY}\n"
)
SECRET_ARGS = {"note": LINE, "nested": {"password": ENV_PASSWORD, "items": [SHORT]}}

# A 1×1 PNG for dokoro_save_image.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


# ---------------------------------------------------------------------------------------- recipes
class Run:
    """What earlier calls returned, for the recipes of later ones."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.results: dict[str, dict[str, Any]] = {}

    def structured(self, tool: str) -> dict[str, Any]:
        return self.results.get(tool) or {}


Recipe = Callable[[Run], dict[str, Any]]


def _memory_id(run: Run, tool: str) -> str:
    return str(run.structured(tool)["memory"]["id"])


def _first_memory(run: Run) -> str:
    return _memory_id(run, "dokoro_remember")


def _text_file(run: Run) -> str:
    path = run.cwd / "deploy-notes.md"
    path.write_text(TEXT, encoding="utf-8")
    return str(path)


def _project_files(run: Run) -> dict[str, Any]:
    """The server's project with secrets in the files onboarding reads (its README's paragraph and
    code block, contributor rules, a package script, a CI step)."""
    (run.cwd / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (run.cwd / "README.md").write_text(f"# Deploys\n\n{LINE}\n\n```sh\nuv run pytest {SHORT}\n```\n", encoding="utf-8")
    (run.cwd / "CONTRIBUTING.md").write_text(f"- Never paste {SHORT} into an issue.\n", encoding="utf-8")
    (run.cwd / "package.json").write_text(
        json.dumps({"name": "deploys", "scripts": {"lint": f"eslint . # {SHORT}"}}), encoding="utf-8"
    )
    (run.cwd / ".github" / "workflows" / "ci.yml").write_text(f"steps:\n  - run: ruff check {SHORT}\n", "utf-8")
    return {}


def _image_file(run: Run) -> str:
    path = run.cwd / "pixel.png"
    path.write_bytes(PNG)
    return str(path)


def _git_repository(run: Run) -> dict[str, Any]:
    """The server's folder as a git checkout whose last commit message and branch carry secrets."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
            cwd=run.cwd,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    (run.cwd / "deploy.txt").write_text("deploy\n", encoding="utf-8")
    git("add", "deploy.txt")
    git("commit", "-q", "-m", f"deploy with {GITHUB} and DB_PASSWORD={ENV_PASSWORD}")
    return {"projectPath": str(run.cwd)}


def _event() -> dict[str, Any]:
    return {
        "event": "context_inspect",
        "timestamp": "2026-06-10T22:00:00Z",
        "totalEstimate": 120,
        "sessionId": "s-secrets",
        "layers": [{"name": "notes", "reason": LINE, "tokenEstimate": 120, "contentSnippet": TEXT, "source": SHORT}],
        "dropped": [{"reason": SHORT, "source": LINE}],
    }


# Tools that answer a question and record something on the way: (plain arguments, with secrets).
ASKING: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "dokoro_check_duplicate": ({"description": "deploy notes token rotate"}, {"description": SHORT}),
    "dokoro_detect_conflicts": ({"feature": "rotate deploy token"}, {"feature": SHORT}),
    "dokoro_regression_history": ({"component": "dokoro_recall"}, {"component": SHORT}),
    "dokoro_session_recall": ({"query": "deploy notes"}, {"query": SHORT}),
    "dokoro_feature_status": ({"feature": "rotate"}, {"feature": SHORT}),
    "dokoro_test_checklist": ({"feature": "rotate"}, {"feature": SHORT}),
    "dokoro_whats_next": ({}, {"context": SHORT}),
}

# Write tools, in the order they run (later recipes use what earlier calls returned). A tool whose
# only job is to read still gets secrets in its query: a query may be logged.
WRITES: dict[str, Recipe] = {
    "dokoro_init": lambda run: {},
    "dokoro_workspace_claim": lambda run: {"task": LINE, "tags": {"note": SHORT}},
    "dokoro_session_log": lambda run: {"entry": TEXT},
    "dokoro_update_current_section": lambda run: {"section": "Notes", "content": TEXT},
    "dokoro_question_add": lambda run: {"question": f"Is {GITHUB} still valid?", "context": TEXT},
    "dokoro_question_answer": lambda run: {"answer": TEXT},
    "dokoro_session_summary_add": lambda run: {
        "session_id": "s-secrets",
        "ai_model": "model",
        "summary": TEXT,
        "key_decisions": [LINE],
        "key_topics": [SHORT],
    },
    "dokoro_plan_create": lambda run: {"title": SHORT, "items": [LINE, "second step", "third"], "description": TEXT},
    "dokoro_plan_check": lambda run: {"itemIndex": 1, "notes": TEXT},
    "dokoro_plan_blocker": lambda run: {"itemIndex": 2, "blocker": TEXT},
    "dokoro_plan_validate": lambda run: {"notes": TEXT, "requireComplete": False},
    "dokoro_plan_feature": lambda run: {"feature": SHORT, "approach": "plan_only", "context": TEXT},
    "dokoro_context_log": lambda run: {"event": _event()},
    "dokoro_feedback_record": lambda run: {
        "tool_name": "dokoro_recall",
        "outcome": "failure",
        "error_message": TEXT,
        "metadata": SECRET_ARGS,
    },
    "dokoro_presence_ping": lambda run: {"current_focus": SHORT},
    "dokoro_file_claim": lambda run: {"paths": ["src/deploy.py"], "intent": SHORT},
    "dokoro_file_release": lambda run: {"all": True},
    "dokoro_shared_note_append": lambda run: {"content": TEXT, "metadata": SECRET_ARGS},
    "dokoro_block_write": lambda run: {"block_key": "deploy", "content": TEXT},
    "dokoro_handoff_write": lambda run: {"summary": TEXT, "open_items": [LINE, SHORT]},
    "dokoro_handoff_claim": lambda run: {"handoff_id": int(run.structured("dokoro_handoff_write")["id"])},
    "dokoro_capture_research": lambda run: {
        "topic": SHORT,
        "findings": TEXT,
        "sources": [f"https://reader:{URL_PASSWORD}@docs.example.org/keys", LINE],
        "tags": {"note": SHORT},
    },
    "dokoro_remember": lambda run: {
        "type": "fact",
        "title": SHORT,
        "body": TEXT,
        "entities": ["postgres", f"postgresql://app:{URL_PASSWORD}@db.example.org", GITHUB],
        "source": LINE,
    },
    "dokoro_memory_verdict": lambda run: {
        "new_id": _memory_id(run, "_second_memory"),
        "old_id": _first_memory(run),
        "verdict": "keep_both",
    },
    "dokoro_recall": lambda run: {"query": SHORT},
    "dokoro_memory_renew": lambda run: {"id": _first_memory(run), "review_after": "2999-01-01"},
    "dokoro_forget": lambda run: {"id": _memory_id(run, "_second_memory"), "reason": SHORT},
    # Its text fields (the reason of a rejection) are checked in test_memory_proposals.py; here the
    # pass files a merge of the restatement below (EXTRA), whose titles carry the secrets.
    "dokoro_memory_proposals": lambda run: {"action": "list"},
    "dokoro_memory_reindex": lambda run: {"full": False},
    "dokoro_save_file": lambda run: {"source": _text_file(run), "category": "documents", "description": SHORT},
    "dokoro_save_image": lambda run: {"source": _image_file(run), "description": SHORT},
    "search_index_content": lambda run: {"doc_id": "deploy-keys", "content": TEXT, "title": SHORT},
    "dokoro_entity_extract_deep": lambda run: {"docId": "deploy-keys", "text": TEXT},
    "search_reindex": lambda run: {"full": True},
    "search_universal": lambda run: {"query": SHORT},
    "bridge_index_research": lambda run: {
        "source": "perplexity_ask",
        "query": LINE,
        "content": TEXT,
        "metadata": SECRET_ARGS,
    },
    "bridge_import_plan": lambda run: {"title": SHORT, "phases": [LINE, TEXT], "filepath": f"plans/{GITHUB}.md"},
    "bridge_get_context": lambda run: {"query": SHORT},
    "dokoro_issue_add": lambda run: {"title": SHORT, "description": TEXT, "estimate": "1h"},
    "dokoro_issue_work": lambda run: {"issue_id": run.structured("dokoro_issue_add")["item"]["id"]},
    "dokoro_issue_complete": lambda run: {
        "issue_id": run.structured("dokoro_issue_add")["item"]["id"],
        "solution": TEXT,
    },
    "dokoro_feature_add": lambda run: {"title": SHORT, "description": TEXT},
    "dokoro_feature_plan": lambda run: {"feature_id": run.structured("dokoro_feature_add")["item"]["id"]},
    "dokoro_feature_start": lambda run: {"feature_id": run.structured("dokoro_feature_add")["item"]["id"]},
    "dokoro_weekly_add_item": lambda run: {"type": "task", "title": SHORT, "effort": "2h"},
    "dokoro_weekly_sync": lambda run: {},
    "dokoro_task_track": lambda run: {"action": "pause", "reason": SHORT},
    "dokoro_backup_verify": lambda run: {"create_backup": True},
    "dokoro_restore_items": lambda run: {"dry_run": False},
    "dokoro_health_check": lambda run: {"fix_issues": True},
    "dokoro_compress_week": lambda run: {},
    "dokoro_ambient_context": _git_repository,
    "dokoro_onboard": _project_files,
    # The analytics that read the workspace markdown first (they index what changed).
    "dokoro_pending": lambda run: {},
    "dokoro_velocity_insights": lambda run: {},
    "dokoro_timeline": lambda run: {"range": "month"},
    "dokoro_archive_sweep": lambda run: {},
    "dokoro_regenerate_current": lambda run: {},
    # Questions that record what was asked: first asked with secrets (EXTRA below), then plainly, so
    # their answers are checked like a read's.
    **{name: (lambda run, args=args: dict(args)) for name, (args, _secret) in ASKING.items()},
    "dokoro_workspace_dump": lambda run: {"reason": TEXT, "keepActive": False},
}

# Calls made between the recipes above (not tools of their own): a second memory for the verdict,
# a restatement for the proposals' pass.
EXTRA: dict[str, tuple[str, str, Recipe]] = {
    **{
        name: (f"_asked_{name}", name, lambda run, secret=secret: dict(secret))
        for name, (_plain, secret) in ASKING.items()
    },
    "dokoro_task_track": ("_task", "dokoro_task_track", lambda run: {"action": "start", "title": SHORT}),
    "dokoro_memory_proposals": (
        "_restated",
        "dokoro_remember",
        lambda run: {
            "type": "fact",
            "title": f"{SHORT} (restated)",
            "body": TEXT,
            "entities": ["postgres", GITHUB],
            "source": SHORT,
        },
    ),
    "dokoro_memory_verdict": (
        "_second_memory",
        "dokoro_remember",
        lambda run: {"type": "decision", "title": f"Keep {AWS} out", "body": TEXT, "source": SHORT},
    ),
}

# Tools that may answer with an error here (no chat model is reachable in tests); they still must
# not store a secret on the way.
MAY_FAIL = {"dokoro_entity_extract_deep"}

# Tools whose answer quotes the repository's own text (git log) back to the caller: nothing of it is
# stored (the rows, files and export are still checked).
# (search_universal and bridge_get_context echo the query redacted: their answers are checked too.)
QUOTES_ITS_INPUT = {"dokoro_ambient_context"}

# Read tools that need arguments (the others are called with none).
READS: dict[str, dict[str, Any]] = {
    "dokoro_block_read": {"block_key": "deploy"},
    "dokoro_context_search": {"query": "deploy notes"},
    "search_dokoros": {"query": "deploy notes"},
    "dokoro_entity_graph": {"query": "postgres"},
    "dokoro_feedback_query": {"tool_name": "dokoro_recall"},
    "dokoro_question_list": {"status": "all", "includeAnswered": True},
    "dokoro_claim_list": {"include_expired": True},
    "list_recent_dokoros": {"days": 30},
    "dokoro_plan_list": {"status": "all"},
}


def _leaks(text: str) -> list[str]:
    lowered = text.lower()
    return [needle for needle in NEEDLES if needle.lower() in lowered]


def _dump(outcome: Any) -> str:
    parts = [getattr(block, "text", "") for block in outcome.content]
    if outcome.structured_content is not None:
        parts.append(json.dumps(outcome.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def _files_with_secrets(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes().lower()
        hits = [needle for needle in NEEDLES if needle.lower().encode() in data]
        if hits:
            found[path.relative_to(root).as_posix()] = hits
    return found


def _rows_with_secrets(root: Path, store_url: str | None) -> dict[str, list[str]]:
    from dokoro_store import Store
    from dokoro_store.moving.transfer import read_rows, store_tables

    found: dict[str, list[str]] = {}
    with Store.open(root, database_url=store_url) as store:
        for table in store_tables():
            for row in read_rows(store.db, table):
                hits = _leaks(json.dumps(row, ensure_ascii=False, default=str))
                if hits:
                    found.setdefault(table.name, []).extend(hits)
    return found


@pytest.fixture
def registers() -> Sequence[Any]:
    from dokoro.server import registers as unified_registers
    from dokoro_server import DokoroSettings

    return unified_registers(DokoroSettings(enable_tachibot_bridge=True))


def test_the_recipes_are_well_formed() -> None:
    assert set(EXTRA) <= set(WRITES)
    assert not set(WRITES) & set(READS)
    pushed = TEXT + LINE + SHORT
    for needle in NEEDLES:
        assert needle in pushed, needle


async def test_an_answer_says_when_the_store_redacted_what_the_tool_wrote(call: Any) -> None:
    # Presence and shared notes have no redaction of their own: the store's hook removed the
    # secret, and the answer still says so.
    pinged = await call("dokoro_presence_ping", current_focus=SHORT)
    assert "redacted" in _dump(pinged) and "github-token" in _dump(pinged)
    noted = await call("dokoro_shared_note_append", content=f"DB_PASSWORD={ENV_PASSWORD}")
    assert "secrets redacted before storing (password)" in _dump(noted)
    plain = await call("dokoro_shared_note_append", content="nothing secret here")
    assert "redacted" not in _dump(plain)


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_no_secret_written_through_any_tool_comes_back(
    make_client: Any, flush_servers: Callable[[], None], root: Path, cwd: Path, tmp_path: Path, store_url: str | None
) -> None:
    run = Run(cwd)
    echoed: dict[str, list[str]] = {}
    async with make_client(enable_tachibot_bridge=True) as client:
        tools = (await client.list_tools()).tools
        writes = [t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)]
        reads = [t.name for t in tools if t.annotations and t.annotations.read_only_hint]
        missing = sorted(set(writes) - set(WRITES))
        assert not missing, (
            f"write tools without a secrets recipe: {missing}; add one to WRITES in {__file__} "
            "(arguments carrying the fake secrets in every text field)"
        )
        for name in reads:
            required = next(t for t in tools if t.name == name).input_schema.get("required", [])
            assert not required or name in READS, (
                f"read tool {name} needs arguments {required}; add them to READS in {__file__}"
            )

        for name, recipe in WRITES.items():
            if name not in writes:
                continue  # a tool this server does not serve (yet)
            if name in EXTRA:
                key, tool, extra = EXTRA[name]
                outcome = await client.call_tool(tool, extra(run))
                assert not outcome.is_error, f"{tool} (for {name}) failed: {_dump(outcome)}"
                run.results[key] = outcome.structured_content or {}
            outcome = await client.call_tool(name, recipe(run))
            flush_servers()
            assert name in MAY_FAIL or not outcome.is_error, f"{name} failed: {_dump(outcome)}"
            run.results[name] = outcome.structured_content or {}
            answer = _dump(outcome)
            if _leaks(answer) and name not in QUOTES_ITS_INPUT:
                echoed[name] = _leaks(answer)
            if "redacted" in answer.lower():
                # An answer that says "redacted" is true: the store holds none of it.
                assert not _rows_with_secrets(root, store_url), f"{name} said redacted but a row holds a secret"
                assert not _files_with_secrets(root), f"{name} said redacted but a file holds a secret"

        # A write's own answer shows what was stored, not the raw text it was given.
        assert not echoed, f"write tools echoed secrets: {echoed}"

        leaked_reads: dict[str, list[str]] = {}
        for name in reads:
            outcome = await client.call_tool(name, READS.get(name, {}))
            hits = _leaks(_dump(outcome))
            if hits:
                leaked_reads[name] = hits
        assert not leaked_reads, f"read tools returned secrets: {leaked_reads}"

    assert not _files_with_secrets(root), "files under the store hold secrets"
    assert not _rows_with_secrets(root, store_url), "database rows hold secrets"

    from dokoro.cli import app
    from typer.testing import CliRunner

    env = {"DOKORO_DATABASE_URL": store_url} if store_url else {}
    exported = CliRunner().invoke(app, ["export", "--path", str(root), "--out", str(tmp_path / "backup")], env=env)
    assert exported.exit_code == 0, exported.output
    (backup,) = (tmp_path / "backup").glob("*.json")
    text = backup.read_text(encoding="utf-8")
    assert "[REDACTED:" in text
    assert not _leaks(text), "dokoro export holds secrets"
