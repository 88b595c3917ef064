"""``dokoro doctor``: which backend, schema, embedder and index this store really uses."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from dokoro.commands._open import open_for_command
from dokoro.commands._output import emit_json

__all__ = ["run_doctor", "run_repair", "run_secret_scan"]

_MARK = {"ok": "[green]✓[/]", "warn": "[yellow]![/]", "fail": "[red]✗[/]", "info": "[blue]·[/]"}


def run_doctor(path: Path | None, json: bool = False) -> bool:
    """Print every check; False when one failed."""
    from dokoro_store import diagnose

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


def run_secret_scan(path: Path | None, fix: bool, json: bool = False) -> bool:
    """Scan every row and file for secrets (and redact them with ``fix``); False when some are left."""
    store = open_for_command(path)
    try:
        scan = store.secret_scan.scan(fix=fix)
    finally:
        store.close()
    if json:
        emit_json(scan.model_dump(mode="json"))
        return scan.clean
    console = Console(soft_wrap=True)
    console.print(
        f"Scanned {scan.rows_scanned} database rows and {scan.files_scanned} files for secrets.", highlight=False
    )
    for finding in scan.findings:
        kinds = ", ".join(dict.fromkeys(finding.kinds))
        if finding.fixed:
            mark = _MARK["ok"] + " redacted"
        elif finding.problem:
            mark = _MARK["fail"] + f" not redacted ({finding.problem})"
        else:
            mark = _MARK["warn"]
        console.print(f"{mark} {escape(finding.where)}: {kinds}", highlight=False)
    left = [f for f in scan.findings if not f.fixed]
    if not scan.findings:
        console.print(f"{_MARK['ok']} no secrets found")
    elif fix:
        console.print(
            f"Redacted {len(scan.findings) - len(left)} of {len(scan.findings)} finding(s); "
            f"re-indexed {scan.documents_reindexed} document(s).",
            highlight=False,
        )
    else:
        console.print(
            f"{len(left)} field(s) or file(s) hold secrets; run `dokoro doctor --scan-secrets --fix` to redact them.",
            highlight=False,
        )
    return scan.clean


def run_repair(path: Path | None, json: bool = False) -> bool:
    """Repair the memory rows an earlier version let in that no file can hold (``dokoro doctor --fix``)."""
    store = open_for_command(path)
    try:
        done = store.memories.repair()
    finally:
        store.close()
    if json:
        emit_json(done.model_dump(mode="json"))
        return True
    console = Console(soft_wrap=True)
    if not done.repaired:
        console.print(f"{_MARK['ok']} nothing to repair: every memory row can be written to its file")
    for repaired in done.repaired:
        console.print(
            f"{_MARK['ok']} {escape(repaired.old_id)} had {escape(repaired.why)}: now {escape(repaired.new_id)}",
            highlight=False,
        )
    return True
