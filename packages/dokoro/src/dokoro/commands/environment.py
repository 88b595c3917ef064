"""The environment settings the quick paths read before any settings class loads (the hooks and
``dokoro rules``): one reading each, so a hook, its warm server and ``dokoro hooks status`` agree."""

from __future__ import annotations

import os

__all__ = ["embedder_choice", "hooks_warm"]


def embedder_choice() -> str | None:
    """``DOKORO_EMBEDDER`` as the store reads it (None: not one it knows)."""
    from dokoro_store import EMBEDDER_CHOICES

    choice = os.environ.get("DOKORO_EMBEDDER", "auto").strip().lower()
    return choice if choice in EMBEDDER_CHOICES else None


def hooks_warm() -> bool:
    """Whether hooks go through the store's warm server (``DOKORO_HOOK_WARM``, on unless switched off)."""
    return os.environ.get("DOKORO_HOOK_WARM", "on").strip().lower() not in ("0", "off", "false", "no")
