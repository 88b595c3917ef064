"""``store.capture``: client transcripts read into the store, and recall for a prompt.

A session's transcript is read from its mark (:class:`~dokoro_store.models.CaptureMark`) on: each
turn (:mod:`.turns`) becomes a document in the session's thread (``doc_type`` 'turn', ``thread`` =
the session id, created at the line's time), saved and indexed in batches by the document
service's bulk path (redacted there like every document; chunks, vectors and the entity graph as
for any other). Turn ids are stable (the first line's uuid), so reading the same lines again
rewrites the same documents: the same transcript twice adds nothing. The mark then moves to the
start of the turn still open, which the next read finishes. Then the session's summary row
(:mod:`.digest`) is written or refreshed, unless an agent wrote one for the session itself.

Recall for a prompt (:meth:`CaptureService.recall`) asks hybrid search over every document —
memories, past turns, the rest — and keeps only hits at or above the calibrated
:data:`~dokoro_store.index.ranking.calibration.CLOSE_MATCH`; past sessions' summaries come from
episodic recall when it finds a close match.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from sqlalchemy import Select, delete, func, insert, select, update

from dokoro_store.capture.digest import CAPTURE_MODEL, Digest
from dokoro_store.capture.recall import recall_for_prompt
from dokoro_store.capture.switches import CaptureSwitches, read_switches
from dokoro_store.capture.transcript import ReadBounds, first_line_digest, open_transcript, peek_cwd, read_lines
from dokoro_store.capture.turns import Turn, TurnBuilder
from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.episodic.results import estimate_tokens
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.index.ranking.calibration import CLOSE_MATCH
from dokoro_store.models import CaptureMark, ConversationSummary, EpisodeSession
from dokoro_store.models.index import docs_table, summary_vectors
from dokoro_store.paths import StorePaths
from dokoro_store.results.capture import CapturedSession, CaptureReport, ForgottenSession, RecallLine
from dokoro_store.semantic.documents.records import NewDocument
from dokoro_store.semantic.documents.service import DocumentService
from dokoro_store.semantic.documents.threads import MAX_THREAD_CHARS
from dokoro_store.walls.secrets import redact, redact_all

if TYPE_CHECKING:
    from dokoro_store.episodic.service import EpisodicService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["TURN_DOC_TYPE", "CaptureService"]

log = logging.getLogger("dokoro.store")

TURN_DOC_TYPE = "turn"
_BATCH = 200  # turns saved and indexed together
_marks = table_of(CaptureMark)
_summaries = table_of(ConversationSummary)
_sessions = table_of(EpisodeSession)


@dataclass
class _Read:
    turns: list[Turn]
    builder: TurnBuilder
    read_to: int
    done: bool
    open_last: bool


class CaptureService:
    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        docs: DocumentService,
        search: SearchService,
        episodic: EpisodicService,
    ) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._docs = docs
        self._search = search
        self._episodic = episodic

    # ------------------------------------------------------------------ switches
    def switches(self, project: Path | None) -> CaptureSwitches:
        """The ``.dokoro.yml`` switches in force for a session of ``project`` (:mod:`.switches`)."""
        return read_switches(self._paths.root, project)

    # ------------------------------------------------------------------ ingest
    def ingest(
        self,
        session_id: str,
        transcript: Path,
        *,
        project: Path | None = None,
        bounds: ReadBounds | None = None,
    ) -> CaptureReport:
        """Read ``transcript``'s new lines into the store (see the module docstring)."""
        session_id = _session_id(session_id)
        if project is None:  # where the session ran, as the transcript says (a back-fill)
            with open_transcript(transcript) as handle:
                named = peek_cwd(handle)
            project = Path(named) if named else None
        switches = self.switches(project)
        if not switches.on:
            return CaptureReport(session_id=session_id, status="off", why=switches.why_off)
        where = str(project) if project is not None else None
        if where and switches.excludes(where):
            return CaptureReport(session_id=session_id, status="excluded", why=f"{where} is excluded from capture")
        with self._db.read() as session:
            mark = session.execute(select(_marks).where(_marks.c.session_id == session_id)).mappings().first()
        with open_transcript(transcript) as handle:
            head = first_line_digest(handle)
            size = handle.seek(0, 2)
            start = int(mark["read_to"]) if mark is not None else 0
            if mark is not None and (mark["head"] != head or start > size):
                start = 0  # replaced or cut: read from the start again (stable ids add nothing twice)
            digest = Digest.load(mark["digest"]) if mark is not None and start else Digest()
            read = self._read(handle, session_id, start, bounds or ReadBounds(), switches, where, size)
        if mark is not None and start == int(mark["read_to"]) and not read.turns and read.builder.lines == 0:
            return CaptureReport(session_id=session_id, status="nothing new", read_to=start, total_turns=mark["turns"])
        changed = self._write_turns(session_id, read.turns, where)
        # The digest keeps the finished turns; the open one (read again next time) is added on a copy.
        finished = read.turns[:-1] if read.open_last else read.turns
        for turn in finished:
            digest.add(turn, where)
        shown = digest.copy()
        if read.open_last:
            shown.add(read.turns[-1], where)
        total = self._count_turns(session_id)
        title = read.builder.title or (mark["title"] if mark is not None else None)
        first_at = (mark["first_at"] if mark is not None and start else None) or read.builder.first_at
        last_at = read.builder.last_at or (mark["last_at"] if mark is not None else None)
        clean_title = redact(title).text if title else None
        values: dict[str, object] = {
            "transcript": str(transcript)[:1000],
            "project": where,
            "head": head,
            "read_to": read.read_to,
            "lines": (int(mark["lines"]) if mark is not None and start else 0) + read.builder.lines,
            "turns": total,
            "tools": shown.tools,
            "skipped": (int(mark["skipped"]) if mark is not None and start else 0) + read.builder.skipped,
            "title": clean_title,
            "digest": digest.dump(),
            "first_at": first_at,
            "last_at": last_at,
            "updated_at": self._clock.now(),
        }
        summary = self._write_summary(session_id, shown, clean_title, total, first_at)
        with self._db.write() as session:
            session.execute(
                self._db.ops.upsert(_marks, {"session_id": session_id, **values}, ["session_id"], list(values))
            )
        return CaptureReport(
            session_id=session_id,
            status="captured" if changed or mark is None else "nothing new",
            lines=read.builder.lines,
            turns=changed,
            tools=sum(t.tool_count for t in read.turns),
            skipped=read.builder.skipped,
            problems=read.builder.problems,
            read_to=read.read_to,
            done=read.done,
            summary=summary,
            total_turns=total,
        )

    def _read(
        self,
        handle: BinaryIO,
        session_id: str,
        start: int,
        bounds: ReadBounds,
        switches: CaptureSwitches,
        project: str | None,
        size: int,
    ) -> _Read:
        excluded = (lambda path: switches.excludes(path, project)) if switches.exclude else None
        builder = TurnBuilder(session_id, excluded=excluded)
        turns: list[Turn] = []
        last_end = start
        for line in read_lines(handle, start, bounds):
            turns.extend(builder.feed(line))
            last_end = line.end
        done = last_end >= size or not bounds.over(last_end - start)
        open_turn = builder.finish()
        if open_turn is None:
            return _Read(turns, builder, last_end, done, open_last=False)
        turns.append(open_turn)
        if not done and open_turn.start == start:
            # One turn longer than a read's bound: the next read starts after what was read, so
            # the read moves on (the turn is then split between two documents).
            return _Read(turns, builder, last_end, done, open_last=False)
        # The open turn is read again next time: it may not be finished.
        return _Read(turns, builder, open_turn.start, done, open_last=True)

    def _write_turns(self, session_id: str, turns: list[Turn], project: str | None) -> int:
        """Save and index the turns as documents of the session's thread; returns how many of them
        were new or changed."""
        changed = 0
        for begin in range(0, len(turns), _BATCH):
            batch = [(t, t.text()) for t in turns[begin : begin + _BATCH]]
            batch = [(t, text) for t, text in batch if text.strip()]
            if not batch:
                continue
            ids = [_turn_id(session_id, t.key) for t, _text in batch]
            places = self._places(session_id, ids)
            docs = [
                NewDocument(
                    id=doc_id,
                    content=text,
                    title=_turn_title(turn, session_id),
                    doc_type=TURN_DOC_TYPE,
                    status="captured",
                    metadata={"session": session_id, "role": turn.role, "project": project},
                    thread=session_id,
                    thread_pos=places[doc_id],
                    created_at=turn.at,
                )
                for doc_id, (turn, text) in zip(ids, batch, strict=True)
            ]
            self._docs.save_many(docs)
            report = self._docs.index_docs(ids)
            for note in report.notes:
                log.info("dokoro: capture: %s", note)
            changed += report.indexed
        return changed

    def _places(self, session_id: str, ids: list[str]) -> dict[str, int]:
        """Each turn's place in the thread: its own when already saved, else after the last."""
        d = docs_table.c
        with self._db.read() as session:
            rows = session.execute(select(d.id, d.thread_pos).where(d.id.in_(ids), d.thread == session_id)).all()
            known = {str(row[0]): row[1] for row in rows}
            last = session.execute(select(func.max(d.thread_pos)).where(d.thread == session_id)).scalar()
        nxt = -1 if last is None else int(last)
        places: dict[str, int] = {}
        for doc_id in ids:
            if known.get(doc_id) is not None:
                places[doc_id] = int(known[doc_id])
            else:
                nxt += 1
                places[doc_id] = nxt
        return places

    def _count_turns(self, session_id: str) -> int:
        d = docs_table.c
        with self._db.read() as session:
            return int(
                session.execute(
                    select(func.count()).where(d.thread == session_id, d.doc_type == TURN_DOC_TYPE)
                ).scalar()
                or 0
            )

    def _write_summary(
        self, session_id: str, digest: Digest, title: str | None, turns: int, first_at: datetime | None
    ) -> str:
        """The session's extractive summary row, unless an agent wrote one (which always wins)."""
        text = digest.render(title, turns)
        s = _summaries.c
        now = self._clock.now()
        with self._db.write() as session:
            rows = session.execute(
                select(s.id, s.ai_model, s.summary, s.message_count).where(s.session_id == session_id)
            ).all()
            ours = [int(r[0]) for r in rows if r[1] == CAPTURE_MODEL]
            if any(r[1] != CAPTURE_MODEL for r in rows):
                if ours:
                    session.execute(delete(_summaries).where(s.id.in_(ours)))
                return "agent's kept"
            if not text:
                return "none"
            (summary, *lists), _kinds = redact_all([text, *digest.decisions, *digest.files[:10]])
            decisions = [str(v) for v in lists[: len(digest.decisions)]]
            topics = [str(v) for v in lists[len(digest.decisions) :]]
            values = {
                "summary": str(summary),
                "key_decisions": decisions or None,
                "key_topics": topics or None,
                "message_count": turns,
                "token_count": estimate_tokens(str(summary)),
            }
            if len(ours) == 1 and any(r[0] == ours[0] and (r[2], r[3]) == (summary, turns) for r in rows):
                return "unchanged"  # read again (a Stop, then SessionEnd): the row and its vector stay
            session.execute(
                self._db.ops.upsert(
                    _sessions, {"id": session_id, "started_at": first_at or now, "status": "completed"}, ["id"], None
                )
            )
            if ours:
                row_id = ours[0]
                session.execute(update(_summaries).where(s.id == row_id).values(**values))
                v = summary_vectors.c
                session.execute(update(summary_vectors).where(v.id == ours[0]).values(embedding=None, embedder=None))
                if len(ours) > 1:
                    session.execute(delete(_summaries).where(s.id.in_(ours[1:])))
            else:
                row_id = session.execute(
                    insert(_summaries)
                    .values(
                        session_id=session_id,
                        ai_model=CAPTURE_MODEL,
                        started_at=first_at or now,
                        created_at=now,
                        **values,
                    )
                    .returning(s.id)
                ).scalar_one()
        try:
            self._episodic.embed_summaries([row_id])
        except Exception:  # the row stays without a vector; recall embeds it when it is a candidate
            log.warning("dokoro: capture: embedding the session summary failed", exc_info=True)
        return "written"

    # ------------------------------------------------------------------ read and forget
    def sessions(self, limit: int = 50) -> list[CapturedSession]:
        """The captured sessions, most recently read first, with their summaries."""
        if not 1 <= limit <= 1000:
            raise InvalidArgumentError(f"limit must be between 1 and 1000; got {limit}")
        return self._sessions(select(_marks).order_by(_marks.c.updated_at.desc()).limit(limit))

    def session(self, session_id: str) -> CapturedSession | None:
        """One captured session with its summary (None: not captured, or forgotten)."""
        found = self._sessions(select(_marks).where(_marks.c.session_id == _session_id(session_id)))
        return found[0] if found else None

    def _sessions(self, query: Select[Any]) -> list[CapturedSession]:
        with self._db.read() as session:
            marks = session.execute(query).mappings().all()
            ids = [m["session_id"] for m in marks]
            s = _summaries.c
            rows = (
                session.execute(
                    select(s.session_id, s.ai_model, s.summary).where(s.session_id.in_(ids)).order_by(s.id)
                ).all()
                if ids
                else []
            )
        summaries: dict[str, str] = {}
        for sid, model, text in rows:
            if model != CAPTURE_MODEL or sid not in summaries:
                summaries[str(sid)] = str(text)
        return [
            CapturedSession(
                session_id=m["session_id"],
                title=m["title"] or (Digest.load(m["digest"]).asks[:1] or ["(no words yet)"])[0],
                project=m["project"],
                turns=m["turns"],
                tools=m["tools"],
                skipped=m["skipped"],
                first_at=m["first_at"],
                last_at=m["last_at"],
                updated_at=m["updated_at"],
                summary=summaries.get(m["session_id"]),
            )
            for m in marks
        ]

    def marks(self, session_ids: Sequence[str]) -> dict[str, int]:
        """How far each of these sessions' transcripts has been read (bytes); absent: never."""
        ids = list(dict.fromkeys(session_ids))
        found: dict[str, int] = {}
        with self._db.read() as session:
            for begin in range(0, len(ids), 500):
                rows = session.execute(
                    select(_marks.c.session_id, _marks.c.read_to).where(
                        _marks.c.session_id.in_(ids[begin : begin + 500])
                    )
                ).all()
                found.update({str(r[0]): int(r[1]) for r in rows})
        return found

    def turns_of(self, session_id: str, limit: int = 200) -> list[tuple[str, str, str]]:
        """A captured session's turns in order: (document id, title, text), at most ``limit``."""
        d = docs_table.c
        with self._db.read() as session:
            rows = session.execute(
                select(d.id, d.title, d.content)
                .where(d.thread == _session_id(session_id), d.doc_type == TURN_DOC_TYPE)
                .order_by(d.thread_pos)
                .limit(limit)
            ).all()
        return [(str(r[0]), str(r[1]), str(r[2] or "")) for r in rows]

    def forget(self, session_id: str) -> ForgottenSession:
        """Remove a captured session: its turns, the summary the capture wrote, and its mark (a
        summary an agent wrote stays: forget it with the tools that wrote it)."""
        session_id = _session_id(session_id)
        d = docs_table.c
        with self._db.read() as session:
            ids = [
                str(x)
                for x in session.execute(
                    select(d.id).where(d.thread == session_id, d.doc_type == TURN_DOC_TYPE)
                ).scalars()
            ]
        turns = sum(self._docs.delete_many(ids[i : i + 500]) for i in range(0, len(ids), 500))
        s = _summaries.c
        with self._db.write() as session:
            summaries = len(
                session.execute(
                    delete(_summaries).where(s.session_id == session_id, s.ai_model == CAPTURE_MODEL).returning(s.id)
                ).all()
            )
            marks = len(
                session.execute(
                    delete(_marks).where(_marks.c.session_id == session_id).returning(_marks.c.session_id)
                ).all()
            )
        if not (turns or summaries or marks):
            raise InvalidArgumentError(
                f"no captured session {session_id!r}: `dokoro browse --category sessions` lists them"
            )
        return ForgottenSession(session_id=session_id, turns=turns, summaries=summaries, marks=marks)

    # ------------------------------------------------------------------ recall
    def recall(
        self, prompt: str, *, session_id: str | None = None, limit: int = 6, min_relevance: float = CLOSE_MATCH
    ) -> list[RecallLine]:
        """What the store holds close to ``prompt`` (:mod:`.recall`), best first; ``session_id``:
        the asking session, whose own turns are left out."""
        return recall_for_prompt(
            self._search, self._episodic, prompt, session_id=session_id, limit=limit, min_relevance=min_relevance
        )


def _session_id(value: str) -> str:
    value = (value or "").strip()
    if not value or len(value) > MAX_THREAD_CHARS or any(c in value for c in "\n\r\t\x00"):
        raise InvalidArgumentError("session_id must be the client's session id (one line, at most 200 characters)")
    return value


def _turn_id(session_id: str, key: str) -> str:
    return f"turn:{session_id}:{key}"


def _turn_title(turn: Turn, session_id: str) -> str:
    who = "Person" if turn.role == "user" else "Agent"
    when = turn.at.strftime("%Y-%m-%d %H:%M") if turn.at else "?"
    return f"{who} · {when} · session {session_id[:8]}"
