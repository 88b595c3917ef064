"""Capture of client transcripts (``store.capture``): Claude Code's JSONL read into turns, a mark
per transcript, the session's summary, the person's switches, forgetting, and recall for a prompt."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, InvalidArgumentError, ReadBounds, Store

FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "session-one.jsonl"
SESSION = "7f3c2a10-5b1e-4c8d-9a2f-0e6b1d4c8a21"
PROJECT = Path("/home/dev/shop")


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    copy = tmp_path / "transcripts" / f"{SESSION}.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(FIXTURE, copy)
    return copy


def _turn_docs(store: Store, session: str = SESSION) -> list[tuple[str, str, str]]:
    return store.capture.turns_of(session)


def test_a_transcript_becomes_the_turns_of_its_session(any_store: Store, transcript: Path) -> None:
    report = any_store.capture.ingest(SESSION, transcript, project=PROJECT)

    assert report.status == "captured" and report.done
    assert report.skipped == 2 and report.problems == {"not JSON": 1, "unknown shape": 1}
    turns = _turn_docs(any_store)
    ids = [doc_id.rsplit(":", 1)[1] for doc_id, _title, _text in turns]
    assert ids == ["u-0001", "a-0001", "u-0003", "a-0004"]  # in order; tool results folded into the agent's turn
    texts = {doc_id.rsplit(":", 1)[1]: text for doc_id, _title, text in turns}
    assert "Customers get logged out" in texts["u-0001"]
    assert "→ Read: /home/dev/shop/auth/session.py" in texts["a-0001"]
    assert "thinking" not in texts["a-0001"] and "check the TTL constant" not in texts["a-0001"]
    agent = texts["a-0004"]
    assert "→ Edit: /home/dev/shop/auth/session.py" in agent and "→ Bash: pytest tests/test_session.py -q" in agent
    assert "✗ Edit: <tool_use_error>File has been modified" in agent  # an error's first line, cut short
    assert "10 passed" not in agent and "filler" not in agent  # tool output never stored
    assert "Done: sessions now slide" in agent  # the agent's last words, after the bookkeeping lines
    everything = " ".join(text for _id, _title, text in turns)
    assert "Only auth/session.py uses it" not in everything  # a sub-agent's sidechain is not the main thread
    assert "AKIAIOSFODNN7EXAMPLE" not in everything and "[REDACTED:aws-access-key]" in texts["u-0003"]


def test_each_turn_is_placed_in_the_session_thread_at_its_time(any_store: Store, transcript: Path) -> None:
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    doc = any_store.docs.get(f"turn:{SESSION}:u-0003")
    assert doc.thread == SESSION and doc.thread_pos == 2 and doc.doc_type == "turn"
    assert doc.created_at.isoformat().startswith("2026-11-30T09:14:02")


def test_the_same_transcript_twice_adds_nothing(any_store: Store, transcript: Path) -> None:
    first = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    again = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert first.total_turns == again.total_turns == 4
    assert again.status == "nothing new"
    assert (again.turns, again.summary) == (0, "unchanged")  # read again, nothing rewritten nor re-embedded
    assert len(_turn_docs(any_store)) == 4
    (session,) = any_store.capture.sessions()
    assert session.turns == 4 and session.title == "Sliding eight-hour session expiry for the shop"
    assert len([e for e in any_store.episodic.recall(session_id=SESSION)]) == 1  # one summary, refreshed


def test_lines_written_later_are_read_from_the_mark_on(any_store: Store, transcript: Path) -> None:
    lines = transcript.read_bytes().splitlines(keepends=True)
    full = b"".join(lines)
    transcript.write_bytes(b"".join(lines[:7]))  # up to the person's second ask
    early = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert early.total_turns == 3
    transcript.write_bytes(full)
    late = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert late.total_turns == 4
    assert [d.rsplit(":", 1)[1] for d, _t, _x in _turn_docs(any_store)] == ["u-0001", "a-0001", "u-0003", "a-0004"]
    agent = any_store.docs.get(f"turn:{SESSION}:a-0004").content or ""
    assert "Done: sessions now slide" in agent  # the turn open at the first read was finished by the second


def test_a_line_being_written_is_left_for_the_next_read(any_store: Store, transcript: Path) -> None:
    data = transcript.read_bytes()
    cut = data.index(b'"uuid":"u-0003"') + 40
    transcript.write_bytes(data[:cut])  # the client is mid-line
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert "u-0003" not in " ".join(d for d, _t, _x in _turn_docs(any_store))
    transcript.write_bytes(data)
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert len(_turn_docs(any_store)) == 4


def test_a_replaced_transcript_is_read_again_without_duplicates(any_store: Store, transcript: Path) -> None:
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[1:]), encoding="utf-8")  # another first line: another file
    again = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert again.total_turns == 4 and len(_turn_docs(any_store)) == 4


def test_a_20_mb_line_is_skipped_without_being_held(store: Store, transcript: Path) -> None:
    lines = transcript.read_bytes().splitlines(keepends=True)
    huge = {
        "type": "user",
        "uuid": "u-huge",
        "sessionId": SESSION,
        "timestamp": "2026-11-30T09:13:00.000Z",
        "message": {"role": "user", "content": "x" * (20 * 1024 * 1024)},
    }
    with transcript.open("wb") as handle:
        handle.writelines(lines[:4])
        handle.write(json.dumps(huge).encode() + b"\n")
        handle.writelines(lines[4:])
    report = store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert report.problems.get("too long") == 1
    assert report.total_turns == 4
    assert all(len(text) < 20_000 for _d, _t, text in _turn_docs(store))


def test_each_read_is_bounded_and_the_next_goes_on(store: Store, transcript: Path) -> None:
    reads = []
    while True:
        report = store.capture.ingest(SESSION, transcript, project=PROJECT, bounds=ReadBounds(max_bytes=2_000))
        reads.append(report)
        if report.done:
            break
        assert len(reads) < 50
    assert len(reads) > 2
    everything = " ".join(text for _d, _t, text in _turn_docs(store))
    for words in ("Customers get logged out", "SESSION_TTL_SECONDS is 300", "We decided", "Done: sessions now slide"):
        assert everything.count(words) == 1
    again = store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert again.status == "nothing new" and again.total_turns == reads[-1].total_turns


def test_the_session_summary_lists_asks_files_decisions_and_errors(any_store: Store, transcript: Path) -> None:
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    (summary,) = any_store.episodic.recall(session_id=SESSION)
    assert summary.ai_model == "dokoro-capture"
    text = summary.summary
    assert text.startswith("Sliding eight-hour session expiry for the shop")
    assert "Asked: Customers get logged out" in text
    assert "Files: auth/session.py" in text  # relative to the project
    assert "We decided to use a sliding expiry" in text
    assert "Errors: Edit: <tool_use_error>File has been modified" in text
    assert "AKIA" not in text
    assert summary.key_decisions == [
        "We decided to use a sliding expiry: the session cookie lives eight hours and every request renews it."
    ]


def test_a_summary_the_agent_wrote_always_wins(any_store: Store, transcript: Path) -> None:
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    any_store.episodic.add_summary(SESSION, "claude-opus-4-6", "Session TTL now slides over eight hours.")
    report = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert report.summary == "agent's kept"
    (summary,) = any_store.episodic.recall(session_id=SESSION)
    assert summary.ai_model == "claude-opus-4-6"
    (session,) = any_store.capture.sessions()
    assert session.summary == "Session TTL now slides over eight hours."


def test_capture_switched_off_for_the_store_writes_nothing(any_store: Store, transcript: Path) -> None:
    (any_store.paths.root / ".dokoro.yml").write_text("capture: off\n", encoding="utf-8")
    report = any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert report.status == "off" and ".dokoro.yml" in (report.why or "")
    assert _turn_docs(any_store) == [] and any_store.capture.sessions() == []
    assert any_store.episodic.recall(session_id=SESSION) == []


def test_capture_switched_off_for_a_project_folder(store: Store, transcript: Path, tmp_path: Path) -> None:
    project = tmp_path / "work" / "client"
    (project / "src").mkdir(parents=True)
    (tmp_path / "work" / ".dokoro.yml").write_text("capture: off\n", encoding="utf-8")
    assert store.capture.ingest(SESSION, transcript, project=project / "src").status == "off"
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert store.capture.ingest(SESSION, transcript, project=other).status == "captured"


def test_excluded_paths_leave_out_the_session_or_the_tool_calls(store: Store, transcript: Path, tmp_path: Path) -> None:
    (store.paths.root / ".dokoro.yml").write_text(
        "exclude:\n  - /home/dev/secret-project\n  - auth/session.py\n", encoding="utf-8"
    )
    assert store.capture.ingest(SESSION, transcript, project=Path("/home/dev/secret-project/api")).status == "excluded"
    report = store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert report.status == "captured"
    everything = " ".join(text for _d, _t, text in _turn_docs(store))
    assert "auth/session.py" not in everything.replace("look at auth/session.py", "")  # the person's words stay
    assert "→ Bash: pytest" in everything
    (summary,) = store.episodic.recall(session_id=SESSION)
    assert "Files:" not in summary.summary


def test_an_unreadable_switch_file_turns_capture_off_and_says_why(store: Store, transcript: Path) -> None:
    (store.paths.root / ".dokoro.yml").write_text("capture: [unclosed\n", encoding="utf-8")
    report = store.capture.ingest(SESSION, transcript, project=PROJECT)
    assert report.status == "off" and "fixed" in (report.why or "")


def test_a_transcript_behind_a_symbolic_link_is_refused(store: Store, transcript: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(transcript)
    with pytest.raises(InvalidArgumentError, match="symbolic link"):
        store.capture.ingest(SESSION, link, project=PROJECT)


def test_forgetting_a_session_removes_its_turns_summary_and_mark(
    any_store: Store, transcript: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(transcript.read_text(encoding="utf-8").replace(SESSION, "other-session"), encoding="utf-8")
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    any_store.capture.ingest("other-session", other, project=PROJECT)
    done = any_store.capture.forget(SESSION)
    assert (done.turns, done.summaries, done.marks) == (4, 1, 1)
    assert _turn_docs(any_store) == [] and any_store.episodic.recall(session_id=SESSION) == []
    assert [s.session_id for s in any_store.capture.sessions()] == ["other-session"]
    assert len(_turn_docs(any_store, "other-session")) == 4
    assert any_store.search.universal("sliding expiry", limit=10).results[0].doc_id.startswith("turn:other-session:")
    with pytest.raises(InvalidArgumentError, match="no captured session"):
        any_store.capture.forget(SESSION)


def test_recall_finds_a_past_turn_in_other_words_and_nothing_for_the_unrelated(
    any_store: Store, transcript: Path
) -> None:
    any_store.capture.ingest(SESSION, transcript, project=PROJECT)
    lines = any_store.capture.recall("what did we decide about session expiry for customers?")
    assert f"turn:{SESSION}:a-0004" in [line.id for line in lines if line.kind == "turn"]
    assert all(line.relevance >= 0.15 for line in lines if line.kind != "session")
    assert any_store.capture.recall("quarterly revenue forecast for the bakery chain in Lisbon") == []
    own = any_store.capture.recall("what did we decide about session expiry for customers?", session_id=SESSION)
    assert all(not line.id.startswith(f"turn:{SESSION}:") and line.id != SESSION for line in own)


def test_recall_renders_ids_within_its_budget(store: Store, transcript: Path) -> None:
    from dokoro_store import render_recall

    store.capture.ingest(SESSION, transcript, project=PROJECT)
    lines = store.capture.recall("what expiry did we pick for sessions?")
    text = render_recall(lines, budget_tokens=100)
    assert lines[0].id in text and len(text) <= 100 * 4
    assert render_recall([], 500) == ""


def test_captured_sessions_list_newest_first(
    store: Store, clock: FrozenClock, transcript: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(transcript.read_text(encoding="utf-8").replace(SESSION, "later"), encoding="utf-8")
    store.capture.ingest(SESSION, transcript, project=PROJECT)
    clock.advance(timedelta(minutes=1))
    store.capture.ingest("later", other, project=PROJECT)
    assert [s.session_id for s in store.capture.sessions()] == ["later", SESSION]
    assert store.capture.marks([SESSION, "never"]).keys() == {SESSION}


def test_the_session_start_briefing_says_nothing_on_an_empty_store_and_lists_what_is_due(
    any_store: Store, clock: FrozenClock
) -> None:
    from dokoro_store import session_start_text

    assert session_start_text(any_store) == ""
    due = any_store.memories.remember(
        type="fact", title="The staging database is db-3", body="until the migration", review_after="2026-06-01"
    ).memory
    clock.advance(timedelta(days=30))
    text = session_start_text(any_store, budget=400)
    assert "## Due for review" in text and due.id in text
    assert len(text) <= 400 * 4 + 400  # the budget counts the sections' lines (the headings are few)
