"""dokoro_compress_week through the MCP client: one retrospective per ISO week, dailies archived."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio

DAILIES = {
    "2026-06-01-09h00-monday-session-auth.md": (
        "---\ntags:\n  scope: auth\n---\n# Session: auth\n\n## Summary\nMoved sessions to JWT.\n\n"
        "## Progress\n- [x] Replaced the cookie store\n- [ ] Rotate keys\n- decision: use short-lived JWTs\n"
        "- insight: refresh tokens need their own table\n"
    ),
    "2026-06-02-14h30-tuesday-session-search.md": (
        "---\ntags:\n  scope: [search, perf]\n---\n# Session: search\n\n## Summary\nFaster search.\n\n"
        "- [x] Added the trigram index\n- [x] Cached the embedder\nDecided: keep FTS5 as the first leg\n"
        "learned: warm caches hide cold-start costs\n"
    ),
    "2026-06-04-10h00-thursday-session-ui.md": "# Session: ui\n\n- [x] Dark mode toggle\n",
}
OUTSIDE = {"2026-06-08-09h00-monday-next-week.md": "# next week\n", "notes.md": "# undated notes\n"}


def write_week(root: Path) -> dict[str, bytes]:
    daily = root / "daily"
    daily.mkdir(parents=True, exist_ok=True)
    for name, text in {**DAILIES, **OUTSIDE}.items():
        (daily / name).write_text(text, encoding="utf-8")
    return {name: (daily / name).read_bytes() for name in DAILIES}


async def test_a_week_becomes_one_indexed_retrospective_and_its_dailies_move_byte_for_byte(call, store, root, clock):
    original = write_week(root)
    store.search.refresh()  # the dailies are documents before the week is compressed
    clock.set(datetime(2026, 6, 3, 18, tzinfo=UTC))
    store.episodic.add_summary("s-wed", "model", "Wednesday: paired on auth.", key_decisions=["Ship JWT on Friday"])
    clock.set(datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC))

    preview = await call("dokoro_compress_week", dryRun=True)
    assert preview.structured_content["week"] == "2026-W23"  # last week, by default
    assert preview.structured_content["preview"].startswith('---\ntitle: "Week 2026-W23 consolidated"')
    assert not (root / "retrospective").exists()
    assert sorted(p.name for p in (root / "daily").iterdir()) == sorted([*DAILIES, *OUTSIDE])

    done = await call("dokoro_compress_week")
    result = done.structured_content
    assert result["summary_path"] == "retrospective/weekly/2026-W23-consolidated.md"
    summary = (root / result["summary_path"]).read_text(encoding="utf-8")
    for accomplishment in ("Replaced the cookie store", "Added the trigram index", "Dark mode toggle"):
        assert accomplishment in summary
    for decision in ("use short-lived JWTs", "keep FTS5 as the first leg", "Ship JWT on Friday"):
        assert f"- {decision}" in summary
    assert "- refresh tokens need their own table" in summary
    assert "Rotate keys" not in summary.split("## 🧭 Decisions")[0].split("## ✅ Top Accomplishments")[1]
    assert "- **Sessions:** 4 (3 daily file(s), 1 session summary(ies))" in summary
    assert "**Focus areas:** auth, search, perf" in summary
    assert "### Thursday 2026-06-04" in summary
    figures = {f["name"]: f["value"] for f in result["figures"]}
    assert figures["estimated hours"] == 10.0 and figures["decisions"] == 3

    archive = root / "archive" / "daily" / "2026-W23"
    assert {p.name: p.read_bytes() for p in archive.iterdir()} == original
    assert sorted(p.name for p in (root / "daily").iterdir()) == sorted(OUTSIDE)
    assert {m["outcome"] for m in result["moved"]} == {"moved"}

    doc = store.docs.get(result["doc_id"])
    assert doc.filepath == result["summary_path"] and doc.doc_type == "retrospective"
    hits = store.search.universal("short-lived JWTs decision", limit=5, mode="keyword").hits
    assert result["doc_id"] in [h.doc_id for h in hits]
    moved_doc = store.docs.get("2026-06-01-09h00-monday-session-auth")
    assert moved_doc.filepath == "archive/daily/2026-W23/2026-06-01-09h00-monday-session-auth.md"

    again = await call("dokoro_compress_week", weekNumber=23, year=2026)
    assert again.structured_content["moved"] == []
    assert (root / result["summary_path"]).read_text(encoding="utf-8") == summary  # same sources, same bytes


async def test_weeks_are_named_by_the_iso_week_year(call, root):
    daily = root / "daily"
    daily.mkdir(parents=True)
    (daily / "2025-12-29-10h00-monday-session-new-year.md").write_text("- [x] Shipped\n", encoding="utf-8")

    done = await call("dokoro_compress_week", weekNumber=1, year=2026)
    assert done.structured_content["summary_path"] == "retrospective/weekly/2026-W01-consolidated.md"
    assert (root / "archive" / "daily" / "2026-W01" / "2025-12-29-10h00-monday-session-new-year.md").exists()
    assert done.structured_content["start"] == "2025-12-29"


async def test_an_empty_week_writes_nothing(call, root):
    done = await call("dokoro_compress_week", weekNumber=10, year=2026)
    assert done.structured_content["summary_path"] is None
    assert "No daily files and no session summaries found for 2026-W10" in done.content[0].text
    assert not (root / "retrospective").exists()
