"""Settings of every dokoro entry point: the only place that reads the environment."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DokoroSettings"]


class DokoroSettings(BaseSettings):
    """``DOKORO_*`` environment variables (and a ``.env`` file is deliberately not read)."""

    model_config = SettingsConfigDict(env_prefix="DOKORO_", extra="ignore")

    path: Path | None = Field(default=None, description="The workspace folder; default ./dokoro.")
    database_url: str | None = Field(
        default=None, description="A database URL instead of the folder's SQLite file."
    )
    agent_id: str = Field(default="unknown", description="Who this server process acts for.")
    auto_feedback: bool = Field(default=True, description="Record every tool outcome (affective layer).")
    enable_tachibot_bridge: bool = Field(default=False, description="Serve the bridge_* tools too.")
