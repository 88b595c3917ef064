"""Recall for a prompt: what the store holds close to what the person just asked.

Hybrid search over every document (memories, captured turns, the rest) ranks the candidates and
calibrates each hit's relevance on one scale (:mod:`dokoro_store.index.ranking.calibration`); only
hits at or above :data:`CLOSE_MATCH` are kept, so a prompt about nothing the store knows gets
nothing. A retired memory is left out, and so are the current session's own turns (the agent has
them already). Past sessions' summaries come from episodic recall, only when it calls its best a
close match and its cosine with the prompt reaches :data:`SUMMARY_FLOOR` (episodic recall has no
calibrated scale of its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro_store.index.ranking.calibration import CLOSE_MATCH
from dokoro_store.index.scope import MEMORY_DOC_PREFIX
from dokoro_store.results.capture import RecallLine

if TYPE_CHECKING:
    from dokoro_store.episodic.service import EpisodicService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["SUMMARY_FLOOR", "recall_for_prompt", "render_recall"]

SUMMARY_FLOOR = 0.5
_EXCERPT = 360
_TURN_PREFIX = "turn:"


def _short(text: str, limit: int = _EXCERPT) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def recall_for_prompt(
    search: SearchService,
    episodic: EpisodicService,
    prompt: str,
    *,
    session_id: str | None = None,
    limit: int = 6,
    min_relevance: float = CLOSE_MATCH,
) -> list[RecallLine]:
    """The close matches for ``prompt``, best first (at most ``limit`` documents and one session)."""
    query = prompt.strip()[:2000]
    if not query:
        return []
    found = search.universal(query, limit=limit * 2, graph=False)
    own = f"{_TURN_PREFIX}{session_id}:" if session_id else None
    lines: list[RecallLine] = []
    for hit in found.results:
        if hit.relevance < min_relevance or hit.retired or (own and hit.doc_id.startswith(own)):
            continue
        if hit.doc_id.startswith(MEMORY_DOC_PREFIX):
            memory_id = hit.doc_id[len(MEMORY_DOC_PREFIX) :]
            lines.append(
                RecallLine(
                    id=memory_id, kind="memory", relevance=hit.relevance, text=f"{hit.title}: {_short(hit.excerpt)}"
                )
            )
        elif hit.doc_id.startswith(_TURN_PREFIX):
            lines.append(
                RecallLine(
                    id=hit.doc_id, kind="turn", relevance=hit.relevance, text=f"{hit.title}: {_short(hit.excerpt)}"
                )
            )
        else:
            lines.append(
                RecallLine(
                    id=hit.doc_id, kind="document", relevance=hit.relevance, text=f"{hit.title}: {_short(hit.excerpt)}"
                )
            )
        if len(lines) >= limit:
            break
    lines.sort(key=lambda line: -line.relevance)
    recalled = episodic.recall_ranked(query=query, limit=2)
    if recalled.close_match:
        for episode in recalled.hits:
            if episode.session_id == session_id or (episode.similarity or 0.0) < SUMMARY_FLOOR:
                continue
            when = episode.started_at.strftime("%Y-%m-%d")
            lines.append(
                RecallLine(
                    id=episode.session_id or str(episode.id),
                    kind="session",
                    relevance=round(float(episode.similarity or 0.0), 3),
                    text=f"session of {when}: {_short(episode.summary, 300)}",
                )
            )
            break
    return lines


def render_recall(lines: list[RecallLine], budget_tokens: int = 500) -> str:
    """The lines as the agent reads them, within ``budget_tokens`` (4 characters a token); empty
    when there is nothing to say."""
    if not lines:
        return ""
    head = (
        "dokoro remembers (close matches for this prompt; a memory id works with dokoro_memory_verdict "
        "and dokoro_forget, a session id — also the middle of a turn id, turn:<session>:… — with "
        "dokoro_session_recall):"
    )
    out = [head]
    used = len(head)
    limit = budget_tokens * 4
    for line in lines:
        what = {"memory": "memory", "turn": "past turn", "document": "document", "session": "session"}[line.kind]
        text = f"- [{what} `{line.id}`, relevance {line.relevance:.2f}] {line.text}"
        if used + 1 + len(text) > limit:
            room = limit - used - 1
            if room < 120:
                break
            text = text[: room - 1] + "…"
        out.append(text)
        used += 1 + len(text)
    return "\n".join(out) if len(out) > 1 else ""
