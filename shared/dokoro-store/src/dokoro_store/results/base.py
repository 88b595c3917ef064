"""Building blocks of every result model: the API's timestamp format and the base class."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer

__all__ = ["IsoTime", "Result"]


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# A UTC moment, serialised as ``YYYY-MM-DDTHH:MM:SSZ`` (the one timestamp format of the API).
IsoTime = Annotated[datetime, PlainSerializer(_iso, return_type=str, when_used="json")]


class Result(BaseModel):
    """Base of every result model (immutable once a service has built it)."""

    model_config = ConfigDict(frozen=True)
