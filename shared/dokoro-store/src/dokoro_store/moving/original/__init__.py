"""Stores the original TypeScript dokoro wrote: read (:mod:`.reading`), moved in (:mod:`.moving_in`),
and first brought from their legacy place, ``<project>/.dokoro`` (:mod:`.legacy`)."""

from dokoro_store.moving.original.legacy import LegacyMove, move_legacy
from dokoro_store.moving.original.moving_in import (
    MoveIn,
    convert_in_place,
    find_conversion,
    import_original,
    original_database,
    preview_original,
)
from dokoro_store.moving.original.reading import OriginalContents, is_original_database, read_original

__all__ = [
    "LegacyMove",
    "MoveIn",
    "OriginalContents",
    "convert_in_place",
    "find_conversion",
    "import_original",
    "is_original_database",
    "move_legacy",
    "original_database",
    "preview_original",
    "read_original",
]
