"""Turning a natural-language question into full-text queries that find things.

An AND of every word of a question finds almost nothing (on LoCoMo 85 % of questions return no
hit), so the planner ORs the terms and lets ranking (bm25, ts_rank) reward documents that match
many. User text never reaches a full-text engine as syntax: every term is a quoted string, so
quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``-``, ``^``, ``:`` and parentheses are plain text and
can never raise a syntax error. A phrase the user put in double quotes stays a phrase.

CJK text has no spaces to split on. Runs of Han, kana and Hangul become substring terms matched
by the trigram index (or LIKE for terms shorter than three characters): long Han runs become
overlapping pairs, particle-like kana is dropped, and a Hangul word also yields its stem without
the trailing particle or ending syllables, so a Korean query matches inflected forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

__all__ = ["STOPWORDS", "PlannedQuery", "is_cjk", "plan_query"]

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves near
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_PHRASE = re.compile(r'"([^"]*)"')
_TOKEN = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 32
# Longer terms are cut to this many characters (a SHA-256 in hex still fits): a term is matched
# as a phrase of its trigrams, whose cost grows with its length times the trigram's occurrences,
# so an unbounded one-word query over a long one-word body took seconds per kilobyte.
_MAX_TERM = 64

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HIRAGANA = r"\u3040-\u309f"
_KATAKANA = r"\u30a0-\u30ff\u31f0-\u31ff"
_HANGUL = r"\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
_RUN = re.compile(
    rf"([{_HAN}]+)|([{_HIRAGANA}]+)|([{_KATAKANA}]+)|([{_HANGUL}]+)|([^{_HAN}{_HIRAGANA}{_KATAKANA}{_HANGUL}]+)"
)
_ANY_CJK = re.compile(rf"[{_HAN}{_HIRAGANA}{_KATAKANA}{_HANGUL}]")


def is_cjk(text: str) -> bool:
    return bool(_ANY_CJK.search(text))


def _quote_fts5(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True)
class PlannedQuery:
    """The pieces of a query: word terms, quoted phrases and CJK substring terms."""

    text: str
    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    cjk: tuple[str, ...] = ()
    stopwords_only: bool = field(default=False)

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.cjk)

    @property
    def words(self) -> tuple[str, ...]:
        """Word terms and phrases: what the word index (FTS5 porter, tsvector) can match."""
        return self.terms + self.phrases

    def fts5(self) -> str | None:
        """An FTS5 MATCH expression: every term and phrase quoted, OR'ed. None when nothing to match."""
        parts = [_quote_fts5(t) for t in self.words]
        return " OR ".join(parts) if parts else None

    def websearch(self) -> str | None:
        """A ``websearch_to_tsquery`` input: terms OR'ed, phrases in quotes (never a syntax error)."""
        parts = list(self.terms) + [f'"{p}"' for p in self.phrases]
        return " or ".join(parts) if parts else None

    def without(self, terms: tuple[str, ...]) -> PlannedQuery:
        """The same query less these word terms (never all of them: the last one stays)."""
        kept = tuple(t for t in self.terms if t not in terms)
        if not kept and not self.phrases and not self.cjk:
            return self
        return replace(self, terms=kept)

    def substrings(self, *, include_words: bool) -> tuple[str, ...]:
        """Terms for the substring index: CJK terms, and (to backfill) the words and phrases."""
        extra = tuple(t for t in self.words if len(t) >= 3) if include_words else ()
        return self.cjk + extra


def _cjk_terms(run: str, script: int) -> list[str]:
    if script == 1:  # Han: short runs are words; long runs (Chinese sentences) become pairs
        if len(run) <= 3:
            return [run]
        return [run[i : i + 2] for i in range(len(run) - 1)]
    if script == 2:  # hiragana: mostly particles and inflections
        return [run] if len(run) >= 3 else []
    if script == 3:  # katakana: loanwords, kept whole
        return [run] if len(run) >= 2 else []
    # Hangul: the word, and its stem without one or two trailing syllables (particles, endings)
    terms = [run]
    for cut in (1, 2):
        if len(run) - cut >= 2:
            terms.append(run[: len(run) - cut])
    return terms


def _split(text: str) -> tuple[list[str], list[str]]:
    words: list[str] = []
    cjk: list[str] = []
    for token in _TOKEN.findall(text):
        if not is_cjk(token):
            words.append(token.lower())
            continue
        for match in _RUN.finditer(token):
            script = match.lastindex or 5
            piece = match.group(script)
            if script == 5:
                words.append(piece.lower())
            else:
                cjk.extend(_cjk_terms(piece, script))
    return words, cjk


def _unique(items: list[str], longest: int = _MAX_TERM) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item[:longest] for item in items if item))[:_MAX_TERMS]


def plan_query(text: str) -> PlannedQuery:
    """Plan ``text`` (any user input; never raises)."""
    phrases: list[str] = []
    cjk: list[str] = []
    for raw in _PHRASE.findall(text):
        words, cjk_terms = _split(raw)
        cjk.extend(cjk_terms)
        if len(words) > 1:
            phrases.append(" ".join(words))
        else:
            phrases.extend(words)
    rest = _PHRASE.sub(" ", text)
    words, cjk_terms = _split(rest)
    cjk.extend(cjk_terms)
    content = [w for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]
    stopwords_only = bool(words) and not content and not phrases and not cjk
    if stopwords_only:
        content = words  # a question made only of stop words still searches for them
    # Single-character Han terms match almost everything; keep them only when nothing else is left.
    long_cjk = [t for t in cjk if len(t) > 1]
    cjk = long_cjk if long_cjk else cjk
    return PlannedQuery(
        text=text,
        terms=_unique(content),
        phrases=_unique(phrases, 4 * _MAX_TERM),
        cjk=_unique(cjk),
        stopwords_only=stopwords_only,
    )
