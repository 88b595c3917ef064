"""What ``dokoro doctor --scan-secrets`` found: where secrets sit in a store (never the secrets)."""

from __future__ import annotations

from dokoro_store.results.base import Result

__all__ = ["SecretFinding", "SecretScan"]


class SecretFinding(Result):
    """One field or file holding secrets: where, and which kinds (the values are never kept)."""

    where: str  # "docs.content [id=notes]" or "file daily/x.md"
    table: str | None = None
    column: str | None = None
    row: str | None = None  # the row's primary key, "id=notes"
    path: str | None = None  # relative to the store folder
    kinds: list[str]
    fixed: bool = False
    problem: str | None = None  # why --fix could not redact it


class SecretScan(Result):
    """A scan of every database row and every file of the store folder, and what --fix did."""

    findings: list[SecretFinding]
    rows_scanned: int
    files_scanned: int
    fix: bool
    documents_reindexed: int = 0

    @property
    def clean(self) -> bool:
        """No secret left: none found, or every one redacted by --fix."""
        return all(finding.fixed for finding in self.findings)
