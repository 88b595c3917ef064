"""Every write path redacts secrets before storing, and the answer says so."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

TOKEN = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
DB_URL = "postgresql://dokoro:hunter2pass@db.internal:5432/team"


async def test_the_claimed_task_and_the_session_log_are_redacted(call, root):
    claim = await call("dokoro_workspace_claim", task=f"rotate {TOKEN}")
    assert "redacted 1 secret" in claim.content[0].text
    log = await call("dokoro_session_log", entry=f"connected with {DB_URL}")
    assert "redacted 1 secret" in log.content[0].text
    assert log.structured_content["redacted"] == ["url-password"]

    current = (root / "current.md").read_text(encoding="utf-8")
    assert TOKEN not in current and "hunter2pass" not in current
    assert "[REDACTED:github-token]" in current and "[REDACTED:url-password]" in current


async def test_a_session_summary_is_redacted_everywhere_it_is_stored(call, store):
    added = await call(
        "dokoro_session_summary_add",
        session_id="s-1",
        ai_model="m",
        summary=f"Used {TOKEN} to push",
        key_decisions=["keep password = 'sup3rsecret!' out of git"],
    )
    assert "redacted 2 secrets" in added.content[0].text
    (hit,) = store.episodic.recall(session_id="s-1")
    assert TOKEN not in hit.summary and "sup3rsecret" not in " ".join(hit.key_decisions)


async def test_questions_and_answers_are_redacted(call, store):
    added = await call("dokoro_question_add", question="Is this key still valid?", context=f"key {TOKEN}")
    assert "redacted 1 secret" in added.content[0].text
    await call("dokoro_question_answer", answer=f"No, rotate it; the new one is {TOKEN[:-1]}X")
    (row,) = store.working.questions.list("all")
    assert TOKEN not in (row.context or "") and "ghp_" not in (row.answer or "")


async def test_a_current_section_is_redacted(call, root):
    await call("dokoro_workspace_claim", task="notes")
    updated = await call("dokoro_update_current_section", section="Notes", content=f"db: {DB_URL}")
    assert "redacted 1 secret" in updated.content[0].text
    assert "hunter2pass" not in (root / "current.md").read_text(encoding="utf-8")
