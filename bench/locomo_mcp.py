"""LoCoMo through the MCP tools over real stdio: the row an agent gets (``--rows mcp`` of the two benches).

One ``dokoro`` server process (the unified launcher, ``python -m dokoro``) per conversation, on a
fresh store folder, spoken to with the ``mcp`` SDK's client over stdio, with the tools' own
arguments only:

- ``search``: every turn through ``search_index_content`` (``doc_id``, ``content`` =
  ``"<speaker>: <text>"`` plus its caption, ``title`` = the session's date, ``thread`` = the
  session, ``at`` = the session's date as ISO-8601); every question through ``search_universal``
  (``query``, ``limit=10``);
- ``memory``: every turn through ``dokoro_remember`` (``type="episode"``, ``title`` = date and dia
  id, ``body`` = the turn, ``entities`` = its speaker, ``source`` = the dia id, ``session_id`` = the
  session, ``trust="imported"`` as the in-process import has it); every question through
  ``dokoro_recall`` (``query``, ``limit=10``; the tool counts every returned hit as a use, as the
  in-process ``+use`` row does).

The rankings are read from the tools' structured results and scored as the in-process rows are.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_retrieval import Scores, doc_id_of, evidence_of, score_list, turns_of
from mcp_calls import _env

__all__ = ["iso_date", "run_mcp"]


def iso_date(text: str) -> str | None:
    """LoCoMo's session date ("1:56 pm on 8 May, 2023") as ISO-8601, None when it does not parse."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for form in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(cleaned, form).replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            continue
    return None


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    outcome = await client.call_tool(tool, arguments)
    if outcome.is_error:
        raise RuntimeError(f"{tool} failed: {outcome.content}")
    return dict(outcome.structured_content or {})


async def _conversation(
    conversation: dict[str, Any], kind: str, embedder: str, scores: Scores, latency: list[float], index: int
) -> tuple[int, float]:
    turns = turns_of(conversation)
    known = {t["dia"] for t in turns}
    with tempfile.TemporaryDirectory(prefix="locomo-mcp-") as tmp:
        env = _env(Path(tmp) / "dokoro")
        env["DOKORO_EMBEDDER"] = embedder
        params = StdioServerParameters(command=sys.executable, args=["-m", "dokoro"], env=env)
        async with Client(params) as client:
            started = time.perf_counter()
            dia_of: dict[str, str] = {}
            for t in turns:
                if kind == "search":
                    arguments: dict[str, Any] = {
                        "doc_id": doc_id_of(t["dia"]),
                        "content": t["text"],
                        "title": t["date"] or t["dia"],
                        "thread": t["thread"],
                    }
                    if (at := iso_date(t["date"])) is not None:
                        arguments["at"] = at
                    await _call(client, "search_index_content", arguments)
                else:
                    done = await _call(
                        client,
                        "dokoro_remember",
                        {
                            "type": "episode",
                            "title": f"{t['date']} ({t['dia']})",
                            "body": t["text"],
                            "entities": [t["text"].split(":", 1)[0]],
                            "source": t["dia"],
                            "session_id": t["thread"],
                            "trust": "imported",
                        },
                    )
                    dia_of[done["memory"]["id"]] = t["dia"]
            ingest = time.perf_counter() - started
            back = {doc_id_of(t["dia"]): t["dia"] for t in turns}
            for qa in conversation["qa"]:
                gold = evidence_of(qa, known)
                category = int(qa.get("category", 0))
                if not gold or category not in (1, 2, 3, 4):
                    continue
                asked = time.perf_counter()
                if kind == "search":
                    found = await _call(client, "search_universal", {"query": str(qa["question"]), "limit": 10})
                    got = [back.get(h["doc_id"]) for h in found["results"]]
                else:
                    found = await _call(client, "dokoro_recall", {"query": str(qa["question"]), "limit": 10})
                    got = [h["memory"]["source"] for h in found["hits"]]
                latency.append((time.perf_counter() - asked) * 1000)
                scores["mcp"][index][category].append(score_list(gold, got))
    return len(turns), ingest


def run_mcp(data: list[dict[str, Any]], convs: list[int], kind: str, embedder: str) -> dict[str, Any]:
    """Scores and latencies of the ``mcp`` row (``kind``: ``search`` or ``memory``)."""
    scores: Scores = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    latency: list[float] = []
    turns, seconds = 0, 0.0

    async def every() -> None:
        nonlocal turns, seconds
        for index in convs:
            count, spent = await _conversation(data[index], kind, embedder, scores, latency, index)
            turns, seconds = turns + count, seconds + spent
            print(f"  mcp {data[index]['sample_id']}: {count} turns, {count / spent:.0f}/s over stdio", file=sys.stderr)

    anyio.run(every)
    return {"scores": scores, "latency": latency, "ingest": turns / seconds if seconds else 0.0}
