"""Moving in from the memory tools people use today: as documents and graph entities, with a preview.

- :mod:`.knowledge_graph`: the JSONL knowledge graph of the MCP reference memory server
  (``@modelcontextprotocol/server-memory``): entities with observations, relations between them;
- :mod:`.notes`: a folder of markdown notes with front matter (basic-memory, Obsidian): wikilinks
  and basic-memory's ``- relation [[Target]]`` lines become relations.

Both produce an :class:`~.items.ImportSet` (nothing written: the preview), which
:func:`~.items.apply_import_set` writes through the store's own services. Idempotent.
"""

from dokoro_store.moving.importers.items import ImportedNote, ImportOutcome, ImportSet, apply_import_set, preview_of
from dokoro_store.moving.importers.knowledge_graph import read_knowledge_graph
from dokoro_store.moving.importers.notes import read_notes_folder

__all__ = [
    "ImportOutcome",
    "ImportSet",
    "ImportedNote",
    "apply_import_set",
    "preview_of",
    "read_knowledge_graph",
    "read_notes_folder",
]
