"""Entity and relation extraction with regular expressions (reference §4.7), no model needed.

Six entity types are recognised; overlapping spans are resolved by type precedence
(file > project > service > person > component > concept), then length. Relations come from
trigger phrases between the nearest entities around them, in the same sentence, unless a
negation occurs just before the trigger. Anything entirely inside a fenced code block is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dokoro_store.semantic.graph.extraction.records import (
    MENTIONS,
    EntityType,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    canonicalise,
)

__all__ = [
    "CONTEXT_CHARS",
    "NEGATION_WINDOW",
    "OBJECT_WINDOW",
    "PRECEDENCE",
    "SUBJECT_WINDOW",
    "detect_relations",
    "extract",
    "extract_entities",
    "fenced_ranges",
]

CONTEXT_CHARS = 40
EVIDENCE_CHARS = 30
NEGATION_WINDOW = 25
SUBJECT_WINDOW = 80
OBJECT_WINDOW = 60

HIGH = 0.85
LOW = 0.7
INFERRED = 0.6
MENTION_CONFIDENCE = 0.5


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PRECEDENCE: dict[str, int] = {"file": 6, "project": 5, "service": 4, "person": 3, "component": 2, "concept": 1}

GAZETTEER: frozenset[str] = _words(
    """
    redis postgres postgresql mysql mongodb mongo elasticsearch kafka rabbitmq nginx docker kubernetes
    k8s aws gcp azure cloudflare s3 dynamodb sqlite lancedb chromadb pinecone weaviate qdrant ollama
    openai anthropic github gitlab vercel supabase firebase stripe twilio sendgrid datadog grafana
    prometheus sentry terraform pulumi
    """
)

# Directory names that make "a/b" a path rather than an owner/repo project.
COMMON_DIRS: frozenset[str] = _words(
    """
    src lib dist test tests config scripts docs bin build public assets node_modules packages
    """
)
# Slash-joined words of ordinary prose that look like owner/repo.
_SLASH_WORDS: frozenset[str] = frozenset(
    {"and/or", "either/or", "read/write", "input/output", "client/server", "on/off", "yes/no", "true/false", "i/o"}
)

# PascalCase words that are language builtins or brand spellings, not components of the project.
_COMPONENT_STOP: frozenset[str] = _words(
    """
    JavaScript TypeScript CoffeeScript ActionScript ArrayBuffer SharedArrayBuffer DataView TypeError
    RangeError SyntaxError ReferenceError EvalError UriError AggregateError InternalError WeakMap
    WeakSet WeakRef BigInt BigInt64Array BigUint64Array Float32Array Float64Array Int8Array Int16Array
    Int32Array Uint8Array Uint16Array Uint32Array Uint8ClampedArray FinalizationRegistry AsyncFunction
    GeneratorFunction AsyncGenerator AsyncGeneratorFunction ReadableStream WritableStream
    TransformStream AbortController AbortSignal TextEncoder TextDecoder FormData EventTarget
    EventEmitter MessageChannel MessagePort BroadcastChannel ServiceWorker SharedWorker WebSocket
    WebAssembly IndexedDb LocalStorage SessionStorage NodeJs NodeList HtmlElement YouTube LinkedIn
    PayPal WordPress MacBook DevOps PowerShell PowerPoint GitHub GitLab PostgreSql MySql MongoDb
    DynamoDb ChromaDb LanceDb RabbitMq OpenAi
    """
)

_PERSON_HANDLE = re.compile(r"(?<![\w@.])@[A-Za-z][\w-]{1,38}(?![\w/-])")
_PERSON_NAME = re.compile(r"\b(?:[Bb]y|[Ff]rom|[Ww]ith)[ \t]+([A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)?)\b")
_FILE_PATH = re.compile(r"(?<![\w/:.@~-])(?:\.{1,2}/)?(?:[\w@.-]+/)+[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,9}(?![\w/])")
_IMPORT_PATH = re.compile(r"""(?:\bfrom[ \t]+|\brequire\([ \t]*)(['"])(\.{1,2}/[^'"\n]+)\1""")
_PROJECT = re.compile(r"(?<![\w/.@:~-])([A-Za-z0-9][\w.-]*)/([A-Za-z0-9](?:[\w.-]*\w)?)(?![\w/]|[.-]\w)")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_SERVICE = re.compile(r"\b(?:" + "|".join(sorted(GAZETTEER, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_URL_HOST = re.compile(r"\bhttps?://([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})")
_COMPONENT = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_HASHTAG = re.compile(r"(?<![\w&#/])#[A-Za-z][\w-]*")
_CONCEPT_AFTER = re.compile(
    r"\b(?:implements|about|regarding)[ \t]+(?:(?:the|a|an|this|that|our|its|their|some)[ \t]+)?([A-Za-z][\w-]*)",
    re.IGNORECASE,
)
# Words after "about"/"regarding" that name nothing.
_CONCEPT_STOP: frozenset[str] = _words(
    """
    it them this that these those how what why when where which who whom whose to and or but is was be
    are were our your their its his her my me us we you they he she all any each every some more most
    half twice once having being
    """
)

_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})")

# Trigger phrases, most specific first: "built by" is authorship, "built" alone is implementation.
# (phrase pattern, relation type, passive: the grammatical agent follows the trigger)
_TRIGGERS: tuple[tuple[str, str, bool], ...] = (
    (r"deprecated\s+in\s+favou?r\s+of", "superseded_by", False),
    (r"superseded\s+by", "superseded_by", False),
    (r"replaced\s+by", "superseded_by", False),
    (r"renamed\s+to", "superseded_by", False),
    (r"blocked\s+by", "blocks", True),
    (r"(?:authored|written|built|created|fixed)\s+by", "authored_by", False),
    (r"depends\s+on", "depends_on", False),
    (r"requires|uses|needs", "depends_on", False),
    (r"blocks", "blocks", False),
    (r"implements|built|created|develops", "implements", False),
)
_TRIGGER = re.compile(
    r"\b(?:" + "|".join(f"(?P<t{i}>{phrase})" for i, (phrase, _, _) in enumerate(_TRIGGERS)) + r")\b",
    re.IGNORECASE,
)
_APOSTROPHE = "['’]"
_NEGATION = re.compile(
    r"\b(?:not|no|never|without|cannot|"
    rf"don{_APOSTROPHE}t|doesn{_APOSTROPHE}t|didn{_APOSTROPHE}t|isn{_APOSTROPHE}t|aren{_APOSTROPHE}t|"
    rf"won{_APOSTROPHE}t|can{_APOSTROPHE}t|does\s+not|do\s+not)\b",
    re.IGNORECASE,
)
# A sentence or list-item boundary: subject and object are looked for on the trigger's side of it.
_BREAK = re.compile(r"[.!?](?=\s)|\n[ \t]*\n|\n[ \t]*(?:[-*+]|\d+[.)])[ \t]")
_WORD = re.compile(r"`[^`\n]+`|[\w@#./-]+")
# Words skipped when a missing subject or object is read from the word next to the trigger.
_FILLER: frozenset[str] = _words(
    """
    the a an this that these those its their our his her my your is was were are be been being has have
    had got gets get also now then just already since currently fully partially finally later new old it
    they we he she
    """
)


@dataclass(frozen=True)
class _Span:
    type: EntityType
    start: int
    end: int
    confidence: float

    @property
    def length(self) -> int:
        return self.end - self.start


def fenced_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks (an unclosed fence runs to the end of the text)."""
    ranges: list[tuple[int, int]] = []
    opener: str | None = None
    start = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        match = _FENCE_LINE.match(line)
        if match:
            fence = match.group(1)
            if opener is None:
                opener, start = fence, offset
            elif fence[0] == opener[0] and len(fence) >= len(opener):
                ranges.append((start, offset + len(line)))
                opener = None
        offset += len(line)
    if opener is not None:
        ranges.append((start, len(text)))
    return ranges


def _inside(ranges: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(low <= start and end <= high for low, high in ranges)


def _snippet(text: str, start: int, end: int, radius: int) -> str:
    return " ".join(text[max(0, start - radius) : end + radius].split())


def _candidates(text: str) -> Iterator[_Span]:
    for m in _PERSON_HANDLE.finditer(text):
        yield _Span("person", m.start(), m.end(), HIGH)
    for m in _PERSON_NAME.finditer(text):
        yield _Span("person", m.start(1), m.end(1), LOW)
    for m in _FILE_PATH.finditer(text):
        yield _Span("file", m.start(), m.end(), HIGH)
    for m in _IMPORT_PATH.finditer(text):
        yield _Span("file", m.start(2), m.end(2), HIGH)
    for m in _PROJECT.finditer(text):
        owner, repo = m.group(1), m.group(2)
        if (
            owner.lower() in COMMON_DIRS
            or _EXTENSION.search(repo)
            or m.group(0).lower() in _SLASH_WORDS
            or not (re.search("[A-Za-z]", owner) and re.search("[A-Za-z]", repo))
        ):
            continue
        yield _Span("project", m.start(), m.end(), LOW)
    for m in _SERVICE.finditer(text):
        yield _Span("service", m.start(), m.end(), HIGH)
    for m in _URL_HOST.finditer(text):
        yield _Span("service", m.start(1), m.end(1), LOW)
    for m in _COMPONENT.finditer(text):
        if m.group(0) in _COMPONENT_STOP or m.group(0).lower() in GAZETTEER:
            continue
        yield _Span("component", m.start(), m.end(), LOW)
    for m in _HASHTAG.finditer(text):
        yield _Span("concept", m.start(), m.end(), HIGH)
    for m in _CONCEPT_AFTER.finditer(text):
        if m.group(1).lower() in _CONCEPT_STOP:
            continue
        yield _Span("concept", m.start(1), m.end(1), LOW)


def _resolve_overlaps(spans: Iterable[_Span]) -> list[_Span]:
    """Keep one span per overlapping run: higher precedence wins, then the longer span."""
    ordered = sorted(spans, key=lambda s: (s.start, -PRECEDENCE[s.type], -s.length))
    kept: list[_Span] = []
    for span in ordered:
        if kept and span.start < kept[-1].end:
            last = kept[-1]
            mine, theirs = PRECEDENCE[span.type], PRECEDENCE[last.type]
            if mine > theirs or (mine == theirs and span.length > last.length):
                kept[-1] = span
            continue
        kept.append(span)
    return kept


def _entity(text: str, span: _Span) -> ExtractedEntity:
    name = text[span.start : span.end]
    return ExtractedEntity(
        type=span.type,
        name=name,
        canonical=canonicalise(span.type, name),
        confidence=span.confidence,
        start=span.start,
        end=span.end,
        context=_snippet(text, span.start, span.end, CONTEXT_CHARS),
    )


def _dedup(entities: Iterable[ExtractedEntity]) -> list[ExtractedEntity]:
    """One entity per (type, canonical), the most confident (the first on a tie), in text order."""
    best: dict[tuple[str, str], ExtractedEntity] = {}
    for entity in entities:
        if not entity.canonical:
            continue
        kept = best.get(entity.key)
        if kept is None or entity.confidence > kept.confidence:
            best[entity.key] = entity
    return sorted(best.values(), key=lambda e: (e.start, e.type))


def _mentions(entities: Iterable[ExtractedEntity]) -> list[ExtractedRelation]:
    return [ExtractedRelation(e.key, e.key, MENTIONS, MENTION_CONFIDENCE, e.context) for e in entities]


def _spans_in(text: str, fences: list[tuple[int, int]]) -> list[_Span]:
    return _resolve_overlaps(s for s in _candidates(text) if not _inside(fences, s.start, s.end))


def _occurrences(text: str) -> list[ExtractedEntity]:
    """Every occurrence of an entity in ``text`` (outside fenced code), overlaps resolved, in text order."""
    return [_entity(text, span) for span in _spans_in(text, fenced_ranges(text))]


def extract_entities(text: str) -> list[ExtractedEntity]:
    """Every entity of ``text`` (outside fenced code), one per (type, canonical name)."""
    return _dedup(_occurrences(text))


def _term_like(word: str) -> bool:
    """Whether a bare word reads as a technical term worth inferring as a concept."""
    return len(word) >= 3 and bool(re.search(r"[-_./0-9]", word) or re.search(r"[a-z][A-Z]", word))


def _concept(text: str, match: re.Match[str]) -> ExtractedEntity | None:
    raw = match.group(0)
    quoted = raw.startswith("`")
    word = raw.strip("`").strip(".,;:!?()[]{}'\"").rstrip("-")
    if not word or word[0] in "@#" or word.lower() in _FILLER or not (quoted or _term_like(word)):
        return None
    canonical = canonicalise("concept", word)
    start = match.start() + raw.find(word)
    return ExtractedEntity(
        type="concept",
        name=word,
        canonical=canonical,
        confidence=INFERRED,
        start=start,
        end=start + len(word),
        context=_snippet(text, start, start + len(word), CONTEXT_CHARS),
    )


def _subject(text: str, low: int, trigger_start: int, before: list[ExtractedEntity]) -> ExtractedEntity | None:
    """The nearest thing before the trigger: an entity, or a term-like word closer than any entity."""
    nearest = max(before, key=lambda e: e.end) if before else None
    words = [m for m in _WORD.finditer(text, low, trigger_start) if m.group(0).strip("`").lower() not in _FILLER]
    if words and (nearest is None or words[-1].start() >= nearest.end):
        concept = _concept(text, words[-1])
        if concept is not None:
            return concept
    return nearest


def _object(text: str, trigger_end: int, high: int, after: list[ExtractedEntity]) -> ExtractedEntity | None:
    """The nearest thing after the trigger: an entity, or a term-like word closer than any entity."""
    nearest = min(after, key=lambda e: e.start) if after else None
    for match in _WORD.finditer(text, trigger_end, high):
        if match.group(0).strip("`").lower() in _FILLER:
            continue
        if nearest is None or match.end() <= nearest.start:
            concept = _concept(text, match)
            if concept is not None:
                return concept
        break
    return nearest


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The start of the sentence holding ``start`` (bounded by the subject window) and the end of the
    sentence holding ``end`` (bounded by the object window)."""
    low = max(0, start - SUBJECT_WINDOW)
    for brk in _BREAK.finditer(text, low, start):
        low = brk.end()
    high = min(len(text), end + OBJECT_WINDOW)
    ahead = _BREAK.search(text, end, high)
    if ahead is not None:
        high = ahead.start()
    return low, high


def detect_relations(
    text: str, entities: list[ExtractedEntity]
) -> tuple[list[ExtractedRelation], list[ExtractedEntity]]:
    """Relations between ``entities`` (every occurrence, with its span) signalled by trigger phrases, plus
    one ``mentions`` self-relation per entity. Returns the relations and the concepts inferred for a
    missing subject or object."""
    fences = fenced_ranges(text)
    spanned = [e for e in entities if e.start >= 0]
    inferred: dict[tuple[str, str], ExtractedEntity] = {}
    found: dict[tuple[tuple[str, str], tuple[str, str], str], ExtractedRelation] = {}
    for match in _TRIGGER.finditer(text):
        start, end = match.span()
        if _inside(fences, start, end):
            continue
        if _NEGATION.search(text, max(0, start - NEGATION_WINDOW), start):
            continue
        index = int((match.lastgroup or "t0")[1:])
        _, relation_type, passive = _TRIGGERS[index]
        low, high = _sentence_bounds(text, start, end)
        before = [e for e in spanned if low <= e.start and e.end <= start]
        after = [e for e in spanned if end <= e.start and e.end <= high]
        subject = _subject(text, low, start, before)
        obj = _object(text, end, high, after)
        if subject is None or obj is None or subject.key == obj.key:
            continue
        guessed = (subject.confidence == INFERRED) + (obj.confidence == INFERRED)
        confidence = (HIGH, LOW, INFERRED)[guessed]
        for entity in (subject, obj):
            if entity.confidence == INFERRED and entity.key not in inferred:
                inferred[entity.key] = entity
        source, target = (obj, subject) if passive else (subject, obj)
        relation = ExtractedRelation(
            source.key, target.key, relation_type, confidence, _snippet(text, start, end, EVIDENCE_CHARS)
        )
        kept = found.get(relation.key)
        if kept is None or relation.confidence > kept.confidence:
            found[relation.key] = relation
    known = {e.key for e in entities}
    new_concepts = [e for key, e in inferred.items() if key not in known]
    relations = _mentions(_dedup([*entities, *new_concepts])) + list(found.values())
    return relations, new_concepts


def extract(text: str) -> Extraction:
    """Entities and relations of ``text`` by regular expressions (source ``regex``)."""
    occurrences = _occurrences(text)
    relations, inferred = detect_relations(text, occurrences)
    return Extraction(entities=_dedup([*occurrences, *inferred]), relations=relations, source="regex")
