"""``dokoro migrate``, ``dokoro reindex``, ``dokoro reembed``: the search index from the command line.

Each calls the same store services the search tools use, with a progress bar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dokoro.commands._open import open_for_command
from dokoro.commands._output import go_ahead

__all__ = ["migrate_markdown", "progress_bar", "reembed_store", "reindex_store"]


@contextmanager
def progress_bar(console: Console, title: str) -> Iterator[Callable[[int, int, str], None]]:
    with Progress(
        TextColumn(f"[bold]{title}[/] {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(done: int, total: int, what: str) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total)
            bar.update(tasks[what], completed=done, total=total)

        yield update


def _index_lines(report: Any) -> list[str]:
    if report is None:
        return []
    lines = [
        f"indexed {report.indexed} document(s), {report.unchanged} unchanged: {report.chunks} chunks, "
        f"{report.tokens} tokens, {report.vectors} vectors ({report.embedder or 'no embedder: full text only'})"
    ]
    return lines + [f"note: {note}" for note in report.notes]


def migrate_markdown(path: Path | None, dry_run: bool, force: bool) -> bool:
    """Import every markdown file of the dokoro folder as a document (§4.13), then index it."""
    console = Console(soft_wrap=True)
    store = open_for_command(path)
    try:
        with progress_bar(console, "migrate") as progress:
            report = store.markdown.import_markdown(dry_run=dry_run, force=force, progress=progress)
    finally:
        store.close()
    verb = "would import" if dry_run else "imported"
    console.print(
        f"{verb} {report.imported}, updated {report.updated}, skipped {report.skipped} (unchanged), "
        f"errors {len(report.errors)}",
        highlight=False,
    )
    if report.renderings_removed:
        console.print(
            f"removed {report.renderings_removed} document(s) an earlier migrate had made of those renderings",
            highlight=False,
        )
    if report.renderings:
        console.print(
            f"left out {report.renderings} file(s) the store renders itself (memories/, tracking/, currentWeek.md)",
            highlight=False,
        )
    if dry_run:
        for rel in report.files:
            console.print(f"  {rel}", highlight=False)
    for line in _index_lines(report.index):
        console.print(line, highlight=False)
    for error in report.errors:
        console.print(f"[red]error[/] {error}", highlight=False)
    return not report.errors


def reindex_store(path: Path | None, full: bool) -> bool:
    """Re-read workspace markdown and index what changed (``full``: rebuild every chunk and vector)."""
    console = Console(soft_wrap=True)
    store = open_for_command(path)
    try:
        files = store.markdown.reconcile()
        with progress_bar(console, "reindex") as progress:
            report = store.docs.reindex(full=full, progress=progress)
        stats = store.docs.stats()
    finally:
        store.close()
    console.print(
        f"workspace files: {files.added} added, {files.updated} updated, {files.removed} removed", highlight=False
    )
    for line in _index_lines(report):
        console.print(line, highlight=False)
    console.print(
        f"index: {stats.indexed_docs}/{stats.total_docs} documents, {stats.chunks} chunks, "
        f"{stats.vectors} vectors (stamp {stats.stamp or 'none'})",
        highlight=False,
    )
    return not files.errors


_EMBEDDERS = ("onnx", "static", "ollama", "hashing")


def reembed_store(
    path: Path | None, embedder_choice: str | None = None, *, yes: bool = False, dry_run: bool = False
) -> bool:
    """Rebuild every vector (documents and session summaries) with ``embedder_choice`` (default: the
    configured one), moving the store from the embedder its index is stamped with: the one command
    that changes a store's embedder, so it shows what it will do and asks first (``yes`` skips that)."""
    console = Console(soft_wrap=True)
    if embedder_choice is not None and embedder_choice not in _EMBEDDERS:
        console.print(f"[red]--embedder must be one of {', '.join(_EMBEDDERS)}[/]", highlight=False)
        return False
    store = open_for_command(path, embedder=embedder_choice)
    try:
        before = store.docs.stamp()[0]
        embedder = store.embedder.require()
        stats = store.docs.stats()
        summaries = store.retrieval.summaries.count()
        console.print(
            "Re-embedding rewrites every vector of this store:\n"
            f"  documents:          {stats.indexed_docs} ({stats.vectors} vectors)\n"
            f"  session summaries:  {summaries}\n"
            f"  embedder now:       {before or 'none'} (the index is stamped {before or 'none'})\n"
            f"  embedder after:     {embedder.id} ({embedder.label})\n"
            "Then the store is restamped: every process on it follows under DOKORO_EMBEDDER=auto, and one "
            "that cannot run that embedder falls back to word matching (and says so).",
            highlight=False,
            markup=False,
        )
        if not go_ahead(console, "Re-embed the whole store?", dry_run=dry_run, yes=yes):
            return True
        console.print(
            f"re-embedding with {embedder.label}, stamp {embedder.id} (was {before or 'none'})",
            highlight=False,
            markup=False,
        )
        with progress_bar(console, "reembed") as progress:
            report = store.docs.reembed(progress=progress)
            summaries = store.retrieval.summaries.reembed_all(embedder)
    finally:
        store.close()
    for line in _index_lines(report):
        console.print(line, highlight=False)
    console.print(f"session summaries re-embedded: {summaries}", highlight=False)
    return True
