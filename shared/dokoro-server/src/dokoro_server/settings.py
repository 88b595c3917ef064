"""Settings of every dokoro entry point: the only place that reads the environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DokoroSettings", "quiet_third_parties"]


class DokoroSettings(BaseSettings):
    """``DOKORO_*`` environment variables (and a ``.env`` file is deliberately not read)."""

    model_config = SettingsConfigDict(env_prefix="DOKORO_", extra="ignore")

    path: Path | None = Field(default=None, description="The workspace folder; default ./dokoro.")
    database_url: str | None = Field(default=None, description="A database URL instead of the folder's SQLite file.")
    agent_id: str = Field(default="unknown", description="Who this server process acts for.")
    auto_feedback: bool = Field(default=True, description="Record every tool outcome (affective layer).")
    enable_tachibot_bridge: bool = Field(default=False, description="Serve the bridge_* tools too.")
    ambient_over_http: bool = Field(
        default=False,
        description=(
            "Let dokoro_ambient_context run git over HTTP too (it reads the served project's branch, commits and "
            "file names); off by default, so a remote agent reads nothing of the server's disk."
        ),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="WARNING", description="What the server logs on stderr (debug, info, warning, error, critical)."
    )
    embedder: Literal["auto", "onnx", "static", "ollama", "hashing", "none"] = Field(
        default="auto",
        description=(
            "Embedder of search and recall: auto (Ollama when OLLAMA_URL is set and answers, else the embedder the "
            "store is stamped with, else the bundled ONNX transformer when dokoro-store[onnx] is installed, else the "
            "bundled static model, else hashing), onnx, static, ollama, hashing (dependency-free floor) or none "
            "(full text only)."
        ),
    )
    memory_review: bool = Field(
        default=False,
        description=(
            "Review queue: every memory an agent remembers (whatever trust it claims) waits as proposed until a "
            "person approves it (`dokoro memory approve|reject`, `dokoro browse`); recall shows them only when asked."
        ),
    )
    functional_relation_types: str = Field(
        default="superseded_by",
        description="Comma-separated single-valued relation types of the entity graph (a new target closes the old).",
    )
    # Ollama keeps its own (unprefixed) variable names, as in the reference.
    ollama_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("ollama_url", "OLLAMA_URL"),
        description="Ollama's base URL; unset = not configured (deep extraction then tries http://localhost:11434).",
    )
    ollama_inference_model: str = Field(
        default="llama3.2",
        validation_alias=AliasChoices("ollama_inference_model", "OLLAMA_INFERENCE_MODEL"),
        description="Chat model of dokoro_entity_extract_deep.",
    )
    ollama_timeout_ms: int = Field(
        default=5000,
        gt=0,
        validation_alias=AliasChoices("ollama_timeout_ms", "OLLAMA_TIMEOUT_MS"),
        description="Timeout of quick Ollama calls (health check, embeddings).",
    )
    ollama_chat_timeout_ms: int = Field(
        default=120_000,
        gt=0,
        validation_alias=AliasChoices("ollama_chat_timeout_ms", "OLLAMA_CHAT_TIMEOUT_MS"),
        description="Timeout of a deep-extraction chat call (generation is slow on a CPU).",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @property
    def functional_relation_type_set(self) -> frozenset[str]:
        return frozenset(part.strip() for part in self.functional_relation_types.split(",") if part.strip())


def quiet_third_parties() -> None:
    """Environment defaults for third-party libraries, set by every entry point (a server's
    ``serve``, the command line) before any of them loads: onnxruntime's telemetry off (its Linux
    wheels report usage and write a session file to the temp folder at import; an offline memory
    has no business doing either). A value the user set is kept."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
