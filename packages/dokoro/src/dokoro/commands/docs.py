"""The documents from the command line: ``search``, ``list``/``ls``, ``get``/``show``, ``update``,
``tags``, ``tag`` and ``untag`` (reference §1.5), on the store's search and board services."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dokoro.commands._open import open_for_command
from dokoro.commands._output import JsonOption, PathOption, console, emit_json, id_table, short_time

__all__ = ["register"]


def _minutes(value: int | None) -> str:
    if value is None:
        return "-"
    hours, rest = divmod(value, 60)
    return f"{hours}h{rest:02d}" if hours else f"{rest}m"


def search(
    query: Annotated[str, typer.Argument(help="What to look for (words or a question).")],
    status: Annotated[str | None, typer.Option(help="Only documents with this status.")] = None,
    doc_type: Annotated[str | None, typer.Option("--type", help="Only documents of this type.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many results (1-100).")] = 20,
    mode: Annotated[str, typer.Option(help="hybrid (default), keyword or semantic.")] = "hybrid",
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Search every document (hybrid full text + vectors); best first."""
    from dokoro_store import InvalidArgumentError

    if not query.strip():  # refused before anything is imported or opened
        raise InvalidArgumentError(
            'the query must not be empty: pass words or a question, e.g. dokoro search "login race"'
        )
    from dokoro_store import SEARCH_MODES

    if not 1 <= limit <= 100:
        raise InvalidArgumentError(f"--limit must be between 1 and 100; got {limit}")
    search_mode = next((m for m in SEARCH_MODES if m == mode), None)
    if search_mode is None:
        raise InvalidArgumentError(f"--mode must be one of {', '.join(SEARCH_MODES)}; got {mode!r}")
    from dokoro_store import DocScope

    # The filters are conditions of the search's legs: a match is found however many others outrank it.
    scope = DocScope(
        doc_types=(doc_type.lower(),) if doc_type else (),
        statuses=(status.lower(),) if status else (),
    )
    store = open_for_command(path)
    try:
        notes = store.search.refresh().notes
        filtered = status is not None or doc_type is not None
        result = store.search.universal(query, limit=limit, mode=search_mode, scope=scope if filtered else None)
    finally:
        store.close()
    hits = result.hits[:limit]
    if json:
        emit_json(
            {
                "query": query,
                "mode": result.mode,
                "notes": [*notes, *result.notes],
                "hits": [
                    {
                        "id": h.doc_id,
                        "title": h.title,
                        "status": h.status,
                        "type": h.doc_type,
                        "tags": h.tags,
                        "filepath": h.filepath,
                        "updated_at": h.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "score": round(h.score, 6),
                        "relevance": h.relevance,
                        "retired": h.retired,
                        "why": h.why,
                        "excerpt": h.excerpt,
                    }
                    for h in hits
                ],
            }
        )
        return
    out = console()
    for note in [*notes, *result.notes]:
        out.print(f"[dim]note: {escape(note)}[/]")
    if not hits:
        out.print(f"No document matches {query!r}.")
        return
    from dokoro_store import CLOSE_MATCH

    # Close matches only, when there are any (the JSON keeps every hit); else the nearest, said so.
    close = [h for h in hits if h.relevance >= CLOSE_MATCH]
    shown = close or hits
    title = f"{len(shown)} result(s) for {query!r}" if close else f"No close match for {query!r}; the nearest"
    rows = [
        (
            h.doc_id,
            h.title + (f" (retired: {h.retired})" if h.retired else ""),
            f"{h.relevance:.2f}",
            h.status,
            h.doc_type,
            short_time(h.updated_at),
            ", ".join(h.tags),
        )
        for h in shown
    ]
    id_table(
        out,
        title,
        ("id", "title", "relevance", "status", "type", "updated", "tags"),
        rows,
        optional=("status", "type", "updated", "tags"),
    )
    if close and len(close) < len(hits):
        out.print(
            f"[dim]{len(hits) - len(close)} weaker hit(s) not shown (relevance < {CLOSE_MATCH}; --json lists them)[/]"
        )


def list_docs(
    status: Annotated[str, typer.Option(help="Documents with this status; 'all' for any.")] = "active",
    doc_type: Annotated[str | None, typer.Option("--type", help="Only this type (e.g. memory, session).")] = None,
    limit: Annotated[int, typer.Option(help="At most this many (1-500).")] = 20,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """List documents with a status (default active): slotted work first, then by priority."""
    store = open_for_command(path)
    try:
        cards = store.board.docs(None if status == "all" else status, doc_type=doc_type, limit=limit)
        others = {} if status == "all" or json else store.board.status_counts(doc_type=doc_type)
    finally:
        store.close()
    others.pop(status, None)
    if json:
        emit_json(cards)
        return
    out = console()
    elsewhere = ", ".join(f"{name} {count}" for name, count in sorted(others.items()) if count)
    hint = f"Other statuses: {elsewhere} (`dokoro list --status all`, or --status NAME)." if elsewhere else ""
    if not cards:
        out.print(f"No {'' if status == 'all' else status + ' '}documents. {hint}".strip(), markup=False)
        return
    rows = [
        (
            "-" if c.slot is None else str(c.slot),
            c.id,
            c.title,
            c.priority,
            _minutes(c.estimate_min),
            _minutes(c.actual_min),
            c.status,
            c.doc_type,
        )
        for c in cards
    ]
    id_table(
        out,
        f"{len(cards)} {'' if status == 'all' else status + ' '}document(s)",
        ("slot", "id", "title", "priority", "estimate", "actual", "status", "type"),
        rows,
        optional=("priority", "type", "slot", "estimate", "actual"),
    )
    if hint:
        out.print(hint, markup=False, style="dim")


def get(
    doc_id: Annotated[str, typer.Argument(help="The document id (see `dokoro list` or `dokoro search`).")],
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Show one document: its fields, tags, stage, slot, times and text. Exit 1 if there is no such id."""
    store = open_for_command(path)
    try:
        doc = store.board.get(doc_id)
    finally:
        store.close()
    if json:
        emit_json(doc)
        return
    out = console()
    out.print(f"[bold]{escape(doc.title)}[/]  [dim]({doc.id})[/]")
    fields = [
        ("file", doc.filepath),
        ("type", doc.doc_type),
        ("status", doc.status),
        ("priority", doc.priority),
        ("tags", ", ".join(doc.tags) or "-"),
        ("PRD stage", doc.prd_stage or "-"),
        ("slot", "-" if doc.slot is None else str(doc.slot)),
        ("estimate", _minutes(doc.estimate_min)),
        ("actual", _minutes(doc.actual_min)),
        ("created", short_time(doc.created_at)),
        ("updated", short_time(doc.updated_at)),
        ("completed", short_time(doc.completed_at)),
    ]
    for label, value in fields:
        out.print(f"  {label:<10} {escape(value)}")
    for entry in doc.time_entries:
        took = "running" if entry.status == "active" else _minutes(entry.duration_min)
        note = f"  {entry.notes}" if entry.notes else ""
        out.print(f"  [dim]time[/]       {short_time(entry.started_at)}  {took}{escape(note)}")
    if doc.content:
        out.print()
        out.print(doc.content.rstrip(), markup=False)


def update(
    doc_id: Annotated[str, typer.Argument(help="The document id.")],
    status: Annotated[
        str | None, typer.Option(help="inbox, backlog, active, pending, paused, blocked, done, archived.")
    ] = None,
    priority: Annotated[str | None, typer.Option(help="urgent, high, medium or low.")] = None,
    stage: Annotated[str | None, typer.Option(help="PRD stage (free text; empty to clear).")] = None,
    slot: Annotated[int | None, typer.Option(help="The parallel slot (terminal) working on it.")] = None,
    estimate: Annotated[int | None, typer.Option(help="Estimated minutes.")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Change a document's status, priority, stage, slot or estimate (done stamps completed_at)."""
    store = open_for_command(path)
    try:
        card = store.board.update(
            doc_id, status=status, priority=priority, stage=stage, slot=slot, estimate_min=estimate
        )
    finally:
        store.close()
    if json:
        emit_json(card)
        return
    console().print(f"Updated {card.id}: status {card.status}, priority {card.priority}.")


def tags(
    doc: Annotated[str | None, typer.Option("--doc", help="Only the tags of this document.")] = None,
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Every tag with how many documents carry it, or the tags of one document."""
    store = open_for_command(path)
    try:
        counts = store.board.tags(doc)
    finally:
        store.close()
    if json:
        emit_json(counts)
        return
    out = console()
    if not counts:
        out.print("No tags." if doc is None else f"{doc} has no tags. Add one with `dokoro tag {doc} NAME`.")
        return
    for tag in counts:
        out.print(escape(tag.name) if doc else f"{tag.count:>5}  {escape(tag.name)}")


def tag(
    doc_id: Annotated[str, typer.Argument(help="The document id.")],
    name: Annotated[str, typer.Argument(help="The tag (one word; lower-cased).")],
    path: PathOption = None,
) -> None:
    """Add a tag to a document."""
    store = open_for_command(path)
    try:
        card = store.board.tag(doc_id, name)
    finally:
        store.close()
    console().print(f"{card.id}: {escape(', '.join(card.tags))}")


def untag(
    doc_id: Annotated[str, typer.Argument(help="The document id.")],
    name: Annotated[str, typer.Argument(help="The tag to remove.")],
    path: PathOption = None,
) -> None:
    """Remove a tag from a document."""
    store = open_for_command(path)
    try:
        card = store.board.untag(doc_id, name)
    finally:
        store.close()
    console().print(f"{card.id}: {escape(', '.join(card.tags)) or 'no tags'}")


def register(app: typer.Typer) -> None:
    """Add the document commands (and their reference aliases) to ``app``."""
    app.command("search")(search)
    app.command("list")(list_docs)
    app.command("ls", hidden=True, help="Alias of list.")(list_docs)
    app.command("get")(get)
    app.command("show", hidden=True, help="Alias of get.")(get)
    app.command("update")(update)
    app.command("tags")(tags)
    app.command("tag")(tag)
    app.command("untag")(untag)
