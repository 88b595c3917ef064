"""What the episodic layer answers and the limits it keeps: compaction and recall results, the
recall's weights and depths, token estimates (apart from the service, ``episodic``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlmodel import col

from dokoro_store.models import ConversationSummary
from dokoro_store.results.episodic import Compaction, Episode, EpisodeRecall, SummaryAdded

if TYPE_CHECKING:
    pass


COMPACTION_THRESHOLD_TOKENS = 40_000
COMPACTION_MODEL = "compaction"
RECALL_DEFAULT_LIMIT = 10
RECALL_MAX_LIMIT = 100
RANK_CANDIDATE_CAP = 500  # the reference's pool; recall's legs each take LEG_DEPTH (or 3 × limit)
LEG_DEPTH = 50
# A summary found by meaning alone needs at least this cosine with the query: paraphrases score
# 0.45-0.55 with the bundled MiniLM embedders, unrelated summaries below 0.3 (measured on the
# pairs of test_episodic_tools.py and retrieval/test_recall_ranking.py).
VECTOR_FLOOR = 0.4
TEXT_WEIGHT = 0.5  # × the full-text score relative to the best match
SUBSTRING_WEIGHT = 0.25  # the summary (or session id) contains the whole query
_NEWEST = (col(ConversationSummary.started_at).desc(), col(ConversationSummary.id).desc())


def estimate_tokens(text: str) -> int:
    """The reference's estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def escape_like(text: str, escape: str = "\\") -> str:
    """Escape LIKE wildcards so user text matches literally."""
    return text.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


@dataclass(frozen=True)
class CompactionResult:
    session_id: str
    compacted_count: int
    total_tokens: int
    row_id: int | None = None  # the compacted row that now holds the session's history

    def result(self) -> Compaction:
        return Compaction(compacted_count=self.compacted_count, total_tokens=self.total_tokens)


@dataclass(frozen=True)
class SummaryOutcome:
    """A summary written, with the compaction it triggered (whose row the store may need)."""

    id: int
    session_id: str
    compaction: CompactionResult | None
    redacted: tuple[str, ...] = ()

    def result(self) -> SummaryAdded:
        compaction = self.compaction.result() if self.compaction is not None else None
        return SummaryAdded(id=self.id, session_id=self.session_id, compaction=compaction, redacted=self.redacted)


class RecallHit(Episode):
    """A recalled summary and, when recall ranked by similarity, its cosine with the query (``similarity``)."""


@dataclass(frozen=True)
class Recall:
    """Recalled summaries and how they were ordered (``ranking`` says which, and why)."""

    hits: list[RecallHit]
    ranking: str
    close_match: bool = True  # False: nothing matched; the hits are the nearest (or latest), not answers

    def result(self) -> EpisodeRecall:
        return EpisodeRecall(
            ranking=self.ranking,
            episodes=[Episode(**hit.model_dump()) for hit in self.hits],
            close_match=self.close_match,
        )
