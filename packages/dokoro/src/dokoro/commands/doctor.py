"""``dokoro doctor``: which backend, schema, embedder and index this store really uses."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from dokoro.commands._open import open_for_command
from dokoro.commands._output import emit_json

__all__ = ["run_doctor"]

_MARK = {"ok": "[green]✓[/]", "warn": "[yellow]![/]", "fail": "[red]✗[/]", "info": "[blue]·[/]"}


def run_doctor(path: Path | None, json: bool = False) -> bool:
    """Print every check; False when one failed."""
    from dokoro_store.health import diagnose

    store = open_for_command(path)
    try:
        checks = diagnose(store)
    finally:
        store.close()
    if json:
        emit_json([{"label": c.label, "value": c.value, "status": c.status} for c in checks])
        return all(c.status != "fail" for c in checks)
    console = Console(soft_wrap=True)
    width = max(len(c.label) for c in checks)
    for check in checks:
        console.print(f"{_MARK[check.status]} {check.label:<{width}}  {check.value}", highlight=False)
    return all(c.status != "fail" for c in checks)
