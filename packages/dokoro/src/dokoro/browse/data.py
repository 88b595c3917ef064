"""What ``dokoro browse`` shows: categories, their items and each item's preview text.

Every category is a :class:`Category` in :data:`CATEGORIES`: an id, a label, the folders whose
changes refresh it (``None``: rows, polled through the store's write signal) and two functions,
``load`` (the items) and ``preview`` (one item's text). Adding a category (the tracking items of
the tracking service, later) is one more entry there.

Files are read from the workspace folder; everything else comes from the store's services.
A load never raises into the screen: a missing folder is an empty list, and a failing database
is one ``(failed to load)`` item that says why (and the error is logged).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dokoro.browse.items import (
    Category,
    CategorySummary,
    Item,
    _ago,
    _file_item,
    _md_files,
    _minutes_left,
    _mtime,
    _stamp,
    _unavailable,
)
from dokoro.browse.memories import memory_card, memory_items, stale_items
from dokoro.browse.proposals import open_proposals, proposal_items
from dokoro.browse.sessions import session_card, session_items

if TYPE_CHECKING:
    from dokoro_store import Store

__all__ = [
    "CATEGORIES",
    "Category",
    "CategorySummary",
    "Item",
    "category_by_id",
    "load_items",
    "preview_text",
    "search_items",
    "sort_items",
    "summaries",
    "unknown_category",
]

log = logging.getLogger("dokoro.browse")

STALE_CURRENT_SECONDS = 3600
SEARCH_LIMIT = 15


# ---------------------------------------------------------------------- file categories
def _current(store: Store) -> list[Item]:
    path = store.paths.current_md
    if not path.is_file():
        return []
    updated = _mtime(path)
    sublabel = f"updated {_stamp(updated)}"
    if (store.clock.now() - updated).total_seconds() > STALE_CURRENT_SECONDS:
        sublabel += " · stale (session ended?)"
    return [_file_item(store, path, sublabel)]


def _heading(path: Path) -> str:
    """The first heading (or first line) of a markdown file: what it is about."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for _number, line in zip(range(40), handle, strict=False):
                text = line.strip()
                if text and text != "---" and ":" not in text[:20].split(" ")[0]:
                    return text.lstrip("#").strip()[:100]
    except OSError:
        return ""
    return ""


def _daily(store: Store) -> list[Item]:
    return [_file_item(store, p, _heading(p)) for p in _md_files(store.paths.daily_dir)]


def _weekly(store: Store) -> list[Item]:
    folder = store.paths.root / "retrospective" / "weekly"
    return [_file_item(store, p, _heading(p)) for p in _md_files(folder)]


def _archive(store: Store) -> list[Item]:
    items: list[Item] = []
    base = store.archive.daily_archive
    if base.is_dir():
        for week in sorted((d for d in base.iterdir() if d.is_dir()), key=lambda d: d.name, reverse=True):
            items += [_file_item(store, p, f"daily · {week.name}", archived=True) for p in _md_files(week)]
    for plan in store.plans.list():
        if plan.archived and plan.archive_path:
            month = plan.archive_path.split("/")[1] if plan.archive_path.count("/") >= 2 else "?"
            items.append(
                Item(
                    id=f"plan:{plan.id}",
                    label=plan.title,
                    sublabel=f"plan · {month}",
                    kind="plan",
                    archived=True,
                    ref=plan.id,
                    status=plan.status,
                )
            )
    return items


def _plans(store: Store) -> list[Item]:
    items = []
    for plan in store.plans.list():
        sublabel = "[archived]" if plan.archived else f"[{plan.status}] {plan.done}/{plan.total} items"
        items.append(
            Item(
                id=f"plan:{plan.id}",
                label=plan.title,
                sublabel=sublabel,
                kind="plan",
                archived=plan.archived,
                ref=plan.id,
                status=plan.status,
            )
        )
    return items


def _plan_card(store: Store, plan_id: str) -> str:
    plan = store.plans.get(plan_id)
    if plan is None:
        return f"Plan {plan_id} is gone."
    lines = [
        f"# {plan.title}",
        "",
        f"- **Status:** {plan.status}" + (" (archived, read-only)" if plan.archived else ""),
        f"- **Completion:** {plan.completion}% ({plan.done}/{plan.total})",
        f"- **Created:** {_stamp(plan.created_at)}",
        f"- **Updated:** {_stamp(plan.updated_at)}",
    ]
    if plan.validated_at:
        lines.append(f"- **Validated:** {_stamp(plan.validated_at)}")
    if plan.description:
        lines += ["", plan.description]
    lines += ["", "## Checklist", ""]
    for item in plan.items:
        lines.append(f"{'☑' if item.completed else '☐'} {item.index}. {item.text}")
        if item.notes:
            lines.append(f"    note: {item.notes}")
        lines += [f"    ⛔ {blocker}" for blocker in item.blockers]
    if plan.validation_notes:
        lines += ["", "## Validation notes", "", plan.validation_notes]
    return "\n".join(lines)


# ---------------------------------------------------------------------- row categories
def _claims(store: Store) -> list[Item]:
    items = []
    for claim in store.coord.claims.list():
        card = [
            f"# Claim: {claim.path}",
            "",
            f"- **Owner:** {claim.agent_id} ({claim.presence})",
            f"- **Expires in:** {_minutes_left(claim.expires_in_seconds)}",
            f"- **Session:** {claim.session_id or '-'}",
            f"- **Intent:** {claim.intent or '-'}",
            f"- **Heartbeats:** {claim.heartbeat_seq}",
        ]
        items.append(
            Item(
                id=f"claim:{claim.path}",
                label=claim.path,
                sublabel=f"owner {claim.agent_id} · expires in {_minutes_left(claim.expires_in_seconds)} "
                f"· holder {claim.presence}",
                kind="claim",
                ref=claim.path,
                status=claim.presence,
                detail="\n".join(card),
            )
        )
    return items


def _agents(store: Store) -> list[Item]:
    from dokoro_store import MAX_TTL, PRESENCE_TTL

    items = []
    for agent in store.coord.presence.list(MAX_TTL):
        live = "live" if agent.seconds_ago <= PRESENCE_TTL else "stale"
        focus = agent.current_focus or "-"
        card = [
            f"# Agent: {agent.agent_id}",
            "",
            f"- **Status:** {agent.status} ({live})",
            f"- **Focus:** {focus}",
            f"- **Session:** {agent.session_id or '-'}",
            f"- **Last seen:** {_ago(agent.seconds_ago)} ago",
            f"- **Heartbeats:** {agent.heartbeat_seq}",
        ]
        items.append(
            Item(
                id=f"agent:{agent.agent_id}",
                label=agent.agent_id,
                sublabel=f"{agent.status} · {focus} · seen {_ago(agent.seconds_ago)} ago · {live}",
                kind="agent",
                ref=agent.agent_id,
                status=live,
                detail="\n".join(card),
            )
        )
    return items


def _questions(store: Store) -> list[Item]:
    items = []
    for question in store.working.questions.list("all"):
        answered = question.status != "open"
        card = [
            f"# Question {question.id}",
            "",
            question.question,
            "",
            f"- **Priority:** {question.priority}",
            f"- **Status:** {question.status}",
            f"- **Asked:** {_stamp(question.created_at)}",
        ]
        if question.context:
            card += ["", "## Context", "", question.context]
        if answered:
            card += ["", f"## Answer ({_stamp(question.answered_at)})", "", question.answer or ""]
        items.append(
            Item(
                id=f"question:{question.id}",
                label=question.question.splitlines()[0][:120] if question.question else question.id,
                sublabel=f"{question.priority} · {question.status}",
                kind="question",
                ref=question.id,
                status=question.status,
                dim=answered,
                detail="\n".join(card),
            )
        )
    return items


def _feedback(store: Store) -> list[Item]:
    items = []
    for event in store.feedback_log.recent(200):
        card = [
            f"# {event.outcome} · {event.tool_name}",
            "",
            f"- **Agent:** {event.agent_id}",
            f"- **Recorded:** {_stamp(event.recorded_at)}",
            f"- **Latency:** {'-' if event.latency_ms is None else f'{event.latency_ms} ms'}",
            f"- **Confidence:** {'-' if event.confidence is None else event.confidence}",
            f"- **Session:** {event.session_id or '-'}",
        ]
        if event.error_message:
            card += ["", "## Error", "", event.error_message]
        items.append(
            Item(
                id=f"feedback:{event.id}",
                label=f"{event.outcome} · {event.tool_name}",
                sublabel=f"{event.agent_id} · {_stamp(event.recorded_at)}",
                kind="feedback",
                ref=str(event.id),
                status=event.outcome,
                detail="\n".join(card),
            )
        )
    return items


def _entities(store: Store) -> list[Item]:
    hits = store.graph.search(None, limit=100).hits
    hits.sort(key=lambda entity: entity.id, reverse=True)  # newest first
    return [
        Item(
            id=f"entity:{entity.id}",
            label=entity.name,
            sublabel=f"{entity.type} · {entity.doc_count or 0} document(s)",
            kind="entity",
            ref=str(entity.id),
        )
        for entity in hits
    ]


def _entity_card(store: Store, entity_id: int) -> str:
    walk = store.graph.traverse(entity_id, depth=1)
    entity = walk.entity
    lines = [f"# {entity.name}", "", f"- **Type:** {entity.type}", f"- **Canonical name:** {entity.canonical_name}"]
    if entity.description:
        lines += ["", entity.description]
    relations = [r for r in walk.relations if r.valid_to is None]
    lines += ["", f"## Open relations ({len(relations)})", ""]
    lines += [f"- {r.source} --[{r.type}]--> {r.target}" for r in relations] or ["_None._"]
    if walk.docs:
        lines += ["", "## Documents", ""] + [f"- {d.doc_id} ({d.relation_type})" for d in walk.docs]
    return "\n".join(lines)


def _sweep(store: Store) -> list[Item]:
    status = store.archive.status()
    if status is None:
        return [Item(id="sweep", label="No sweep has run yet", sublabel="", kind="sweep", detail="No sweep has run.")]
    sublabel = f"last run {status.last_run} · {status.moved_daily} daily · {status.archived_plans} plan(s)"
    if status.last_error:
        sublabel += " · last error!"
    card = [
        "# Archive sweep",
        "",
        f"- **Last run:** {status.last_run}",
        f"- **Daily files moved:** {status.moved_daily}",
        f"- **Plans archived:** {status.archived_plans}",
        f"- **Last error:** {status.last_error or '-'}",
    ]
    card += [f"- {e.path}: {e.error}" for e in status.errors]
    return [Item(id="sweep", label="Archive sweep status", sublabel=sublabel, kind="sweep", detail="\n".join(card))]


def _tracking(store: Store) -> list[Item]:
    """Issues, then features, newest first (up to the service's listing limit of each): their
    markdown rendering is the preview."""
    from dokoro_store import MAX_LIST

    items = []
    for kind in ("issue", "feature"):
        listing = store.tracking.list_items(kind, limit=MAX_LIST)
        for entry in listing.items:
            closed = entry.status in ("resolved", "completed")
            detail = entry.category or entry.complexity or ""
            items.append(
                Item(
                    id=f"{kind}:{entry.id}",
                    label=entry.title,
                    sublabel=f"{kind} · {entry.status} · {entry.priority}" + (f" · {detail}" if detail else ""),
                    kind="tracking",
                    archived=closed,
                    path=store.paths.root / entry.path,
                    ref=entry.id,
                    status=entry.status,
                    dim=closed,
                )
            )
    return items


def _dirs(*parts: str) -> Callable[[Path], list[Path]]:
    return lambda root: [root.joinpath(part) for part in parts]


def _archive_dirs(root: Path) -> list[Path]:
    base = root / "archive" / "daily"
    weeks = sorted(d for d in base.iterdir() if d.is_dir()) if base.is_dir() else []
    return [base, *weeks, root / ".mcp" / "plans"]


def _open_questions(items: list[Item]) -> int:
    return sum(1 for item in items if item.status == "open")


CATEGORIES: tuple[Category, ...] = (
    Category("current", "Current workspace", _current, _dirs("."), hint="current.md"),
    Category("daily", "Daily sessions", _daily, _dirs("daily"), hint="daily/"),
    Category("weekly", "Weekly retrospectives", _weekly, _dirs("retrospective/weekly"), hint="retrospective/weekly/"),
    Category("archive", "Archive", _archive, _archive_dirs, hint="archived dailies and plans"),
    Category("plans", "Plans", _plans, _dirs(".mcp/plans"), hint="checklists agents work through"),
    Category("claims", "File claims", _claims, hint="who is editing which file"),
    Category("agents", "Agent presence", _agents, hint="heartbeats of the agents"),
    Category("questions", "Questions", _questions, badge=_open_questions, hint="open questions (answered dimmed)"),
    Category("feedback", "Feedback", _feedback, hint="tool outcomes, newest first"),
    Category("entities", "Entities", _entities, hint="the entity graph"),
    Category("sweep", "Archive sweep status", _sweep, _dirs(".mcp"), hint=".mcp/archive-status.json"),
    Category("memories", "Memories", memory_items, hint="facts, decisions, rules, guardrails, ..."),
    Category("stale", "Stale memories", stale_items, hint="past a date: n renews, f retires"),
    Category("proposals", "Proposals", proposal_items, badge=open_proposals, hint="memory upkeep waiting for you"),
    Category("tracking", "Issues and features", _tracking, _dirs("tracking"), hint="tracking/ (rows, rendered)"),
    Category("sessions", "Captured sessions", session_items, hint="Claude Code sessions the hooks captured"),
)


def category_by_id(category_id: str) -> Category | None:
    wanted = category_id.strip().lower()
    return next((c for c in CATEGORIES if c.id == wanted), None)


def unknown_category(category_id: str) -> str:
    """What to say of a category that does not exist: the one meant, and every one there is."""
    import difflib

    ids = [c.id for c in CATEGORIES]
    meant = difflib.get_close_matches(category_id.strip().lower(), ids, n=1, cutoff=0.6)
    hint = f"did you mean {meant[0]!r}? " if meant else ""
    return f"unknown category {category_id!r}; {hint}the categories are {', '.join(ids)}"


def load_items(store: Store, category: Category) -> list[Item]:
    """The items of one category; a failure becomes one ``(failed to load)`` item."""
    try:
        return category.load(store)
    except Exception as exc:  # shown on screen and logged: a browser must outlive a database hiccup
        return _unavailable(exc)


def summaries(store: Store) -> list[CategorySummary]:
    result = []
    for category in CATEGORIES:
        items = load_items(store, category)
        count = 0 if items and items[0].kind == "error" else category.badge(items)
        result.append(CategorySummary(category.id, category.label, count, category.hint))
    return result


def preview_text(store: Store, item: Item) -> str:
    """The text of an item's preview (re-read each time: the preview refreshes with it)."""
    try:
        if item.path is not None:
            try:
                return item.path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                return f"{item.label} is gone (moved or deleted)."
        if item.kind == "plan" and item.ref:
            return _plan_card(store, item.ref)
        if item.kind == "memory" and item.ref:
            return memory_card(store, item.ref)
        if item.kind == "session" and item.ref:
            return session_card(store, item.ref)
        if item.kind == "entity" and item.ref:
            return _entity_card(store, int(item.ref))
        return item.detail or f"{item.label}\n{item.sublabel}"
    except Exception as exc:  # shown in the preview and logged, as for lists
        log.warning("dokoro browse: a preview failed", exc_info=True)
        return f"(unavailable: {exc})"


def search_items(store: Store, query: str) -> list[Item]:
    """Hybrid search results as openable items (raises: the caller reports the failure). As the
    search tools do, changed documents (hand-edited markdown, new issues) are indexed first."""
    store.search.refresh()
    result = store.search.universal(query, limit=SEARCH_LIMIT)
    items = []
    for hit in result.hits:
        sublabel = f"{hit.source} {hit.score:.3f} · {hit.filepath}"
        if hit.doc_id.startswith("memory:"):
            items.append(
                Item(id=hit.doc_id, label=hit.title, sublabel=sublabel, kind="memory", ref=hit.doc_id[len("memory:") :])
            )
            continue
        path = store.paths.root / hit.filepath
        if "://" not in hit.filepath and path.is_file():
            items.append(Item(id=f"search:{hit.doc_id}", label=hit.title, sublabel=sublabel, kind="file", path=path))
        else:
            items.append(
                Item(id=f"search:{hit.doc_id}", label=hit.title, sublabel=sublabel, kind="search", detail=hit.excerpt)
            )
    return items


def sort_items(items: Sequence[Item], order: str) -> list[Item]:
    """``default`` (the source's order), ``reverse``, or ``label`` (case-insensitive)."""
    if order == "reverse":
        return list(reversed(items))
    if order == "label":
        return sorted(items, key=lambda i: (i.label.lower(), i.id))
    return list(items)
