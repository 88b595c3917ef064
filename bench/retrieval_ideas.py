"""Issue 48's ideas measured on LoCoMo and not kept in the product: their steps, for ``bench/ablation.py``.

Each is a step added to the product's ranking rebuilt from its public pieces; ``bench/locomo_retrieval.py``
prints a row per idea (``+quota3``, ``+thread-penalty``, ``+graph-expand``, ``+thread-expand``,
``+thread-boost``, ``+prf``, ``+rocchio``, ``+preference``) beside ``default``; docs/benchmarks.md says
why none was kept. The one idea kept (the vector leg reading the query less the speaker it names) is
in the product: ``dokoro_store.index.ranking.speakers``.

- diversity across threads: at most ``quota`` turns of one thread in the page, or (MMR-like) each
  turn of a thread already in the page costs ``penalty`` × the best score;
- the graph from the first hits: the entities named in the first three hits' texts, and the
  documents linked to them, join the candidates;
- two stages by thread: every turn of the best two threads of a first ranking joins the candidates
  (``thread_expand``), or a turn gains ``boost`` × its thread's score (``thread_boost``);
- pseudo-relevance feedback: RM3-like, the full-text leg also searches the most distinctive terms of
  the first five hits (term frequency there × rarity among the first fifty), their scores added at
  ``PRF_ALPHA``; Rocchio-like, the vector leg searches again toward the first three hits' centroid;
- routing a question about a person's traits or preferences to that person's statements of
  preference: a re-ranker feature.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dokoro_store import Store
from dokoro_store.index.fulltext.index import TextHit
from dokoro_store.index.ranking.hybrid import Scored
from dokoro_store.index.ranking.neighbours import load_threads
from dokoro_store.index.ranking.rerank import speaker_of
from dokoro_store.index.vectors.index import VectorHit

if TYPE_CHECKING:
    from ablation import Variant

__all__ = ["diversified", "second_pass", "stated_preferences", "thread_boosted"]

PRF_DOCS, PRF_POOL, PRF_ALPHA = 5, 50, 0.5
ROCCHIO_DOCS, ROCCHIO_WEIGHT = 3, 0.5
_WORD = re.compile(r"[a-z]{4,}")


def _thread_of(store: Store, ids: Sequence[str]) -> dict[str, str]:
    places = load_threads(store.db, ids, span=0).place
    return {d: places[d][0] if d in places else d for d in ids}


def diversified(store: Store, ranked: list[Scored], quota: int, penalty: float, limit: int) -> list[str]:
    """The page with at most ``quota`` turns of a thread (0: no cap), each turn of a thread already in
    it costing ``penalty`` × the best score; the rest follow in their order."""
    head = ranked[: max(50, limit)]
    thread = _thread_of(store, [s.doc_id for s in head])
    best = head[0].score if head and head[0].score else 1.0
    chosen: list[str] = []
    taken: Counter[str] = Counter()
    left = list(head)
    while left and len(chosen) < limit:
        allowed = [s for s in left if not quota or taken[thread[s.doc_id]] < quota]
        if not allowed:
            break
        pick = max(allowed, key=lambda s: s.score / best - penalty * taken[thread[s.doc_id]])
        chosen.append(pick.doc_id)
        taken[thread[pick.doc_id]] += 1
        left.remove(pick)
    return chosen + [s.doc_id for s in left] + [s.doc_id for s in ranked[len(head) :]]


def thread_boosted(store: Store, ranked: list[Scored], boost: float, depth: int = 50) -> list[Scored]:
    """Two stages by thread: each of the best ``depth`` gains ``boost`` × its thread's score, the mean
    of the thread's best two scores there (scores rescaled to [0, 1])."""
    head, tail = ranked[:depth], ranked[depth:]
    if len(head) < 2:
        return ranked
    thread = _thread_of(store, [s.doc_id for s in head])
    low, high = min(s.score for s in head), max(s.score for s in head)
    span = (high - low) or 1.0
    scores: dict[str, list[float]] = {}
    for s in head:
        scores.setdefault(thread[s.doc_id], []).append((s.score - low) / span)
    of_thread = {t: sum(sorted(v, reverse=True)[:2]) / 2 for t, v in scores.items()}
    value = {s.doc_id: (s.score - low) / span + boost * of_thread[thread[s.doc_id]] for s in head}
    return sorted(head, key=lambda s: (-value[s.doc_id], s.doc_id)) + tail


def second_pass(store: Store, query: str, legs: Any, first: list[str], variant: Variant, depth: int) -> None:
    """Add to ``legs`` what the first ranking's hits point to (the variant's expansions)."""
    joined: list[str] = []
    if variant.graph_expand and store.search.graph_signal is not None:
        texts = store.search.texts(first[:3])
        linked = store.search.graph_signal(" ".join(texts.get(d, "") for d in first[:3]), variant.graph_expand)
        joined += [g.doc_id for g in linked]
    if variant.thread_expand:
        best = list(dict.fromkeys(_thread_of(store, first[:10]).values()))[: variant.thread_expand]
        with store.db.read() as session:
            marks = ", ".join("?" for _ in best)
            rows = session.connection().exec_driver_sql(f"SELECT id FROM docs WHERE thread IN ({marks})", tuple(best))
            joined += [str(r[0]) for r in rows]
    if variant.rocchio and legs.query_vector is not None:
        import numpy as np

        embedder = store.embedder.get()
        assert embedder is not None
        mine = store.search.texts(first[:ROCCHIO_DOCS])
        centroid = np.mean(embedder.embed([mine[d] for d in first[:ROCCHIO_DOCS] if d in mine]), axis=0)
        moved = legs.query_vector + ROCCHIO_WEIGHT * centroid
        moved = (moved / np.linalg.norm(moved)).astype(np.float32)
        hits, _stored = store.search.vector_leg(moved, legs.embedder_id, depth)
        joined += [h.doc_id for h in hits][: variant.rocchio]
    if variant.prf_terms:
        legs.text_hits = _with_feedback_terms(store, legs, first, variant.prf_terms, depth)
    # Joined documents enter the vector leg after its own hits (the fusion reads their cosines).
    known = {h.doc_id for h in legs.vector_hits} | {h.doc_id for h in legs.text_hits}
    extra = [d for d in dict.fromkeys(joined) if d not in known]
    legs.vector_hits = list(legs.vector_hits) + [VectorHit(f"{d}#joined", d, 0.0) for d in extra]


def _with_feedback_terms(store: Store, legs: Any, first: list[str], count: int, depth: int) -> list[TextHit]:
    texts = store.search.texts(first[:PRF_POOL])

    def words(doc_id: str) -> set[str]:
        return set(_WORD.findall(texts.get(doc_id, "").partition("\n")[2].lower()))

    found_in = Counter(w for d in first[:PRF_POOL] for w in words(d))
    often = Counter(w for d in first[:PRF_DOCS] for w in words(d))
    asked = set(legs.planned.terms)
    pool = len(first[:PRF_POOL])
    weighed = [
        (n * math.log((pool + 1) / (found_in[w] + 0.5)), w) for w, n in often.items() if n >= 2 and w not in asked
    ]
    terms = [w for _, w in sorted(weighed, reverse=True)[:count]]
    if not terms:
        return list(legs.text_hits)
    expansion = store.search.legs(" ".join(terms), "keyword", limit=depth, depth=depth).text_hits
    merged = {h.doc_id: h.score for h in legs.text_hits}
    for h in expansion:
        merged[h.doc_id] = merged.get(h.doc_id, 0.0) + PRF_ALPHA * h.score
    top = max(merged.values())
    return [TextHit(d, v / top, "words") for d, v in sorted(merged.items(), key=lambda item: (-item[1], item[0]))]


# A question about a person's traits, leanings or tastes; a first-person statement of one.
_TRAIT_QUESTION = re.compile(
    r"\b(would|likely|might|enjoy|prefer|favou?rite|personality|traits?|attributes?|describe|considered|interested|"
    r"view|opinion)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(I|I'm|I've|my|me)\b.*\b(love|like|enjoy|prefer|favou?rite|passion|passionate|dream|hope|want|always|"
    r"fan of|believe|value|care about)\b",
    re.IGNORECASE,
)


def stated_preferences(query: str, bodies: Sequence[str]) -> list[float]:
    """Per body, 1 when the query asks about a person's traits or tastes and the body is that person's
    chat line stating a preference (:func:`speaker_of` names a speaker the query names), else 0."""
    if not _TRAIT_QUESTION.search(query):
        return [0.0] * len(bodies)
    words = {w.lower() for w in re.findall(r"\w+", query)}
    out = []
    for body in bodies:
        names = speaker_of(body)
        own = bool(names) and all(w.lower() in words for w in names or ())
        out.append(1.0 if own and _PREFERENCE.search(body.partition("\n")[2]) else 0.0)
    return out
