"""A writable copy of the store the original TypeScript dokoro wrote (``../shared/fixtures/original-store``,
beside the repository): tests convert and use the copy, never the fixture itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

__all__ = ["ORIGINAL_STORE", "original_copy"]

# This package is a workspace member installed editable: shared/dokoro-testkit/src/dokoro_testkit/.
ORIGINAL_STORE = Path(__file__).resolve().parents[5] / "shared" / "fixtures" / "original-store" / "dokoro"


def original_copy(tmp_path: Path, name: str = "dokoro") -> Path:
    """A writable copy of the original's store folder at ``tmp_path / name`` (skips the test when
    the fixture is not beside the repository)."""
    if not ORIGINAL_STORE.is_dir():
        pytest.skip(f"the original store fixture is not at {ORIGINAL_STORE}")
    target = tmp_path / name
    shutil.copytree(ORIGINAL_STORE, target)
    for path in [target, *target.rglob("*")]:  # the fixture is laid read-only
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target
