"""Moving in from the memory tools people use today: as documents and graph entities, with a preview.

- :mod:`.knowledge_graph`: the JSONL knowledge graph of the MCP reference memory server
  (``@modelcontextprotocol/server-memory``): entities with observations, relations between them;
- :mod:`.notes`: a folder of markdown notes with front matter (basic-memory, Obsidian): wikilinks
  and basic-memory's ``- relation [[Target]]`` lines become relations.

Both read a person's file or folder within bounds and say what they skipped and why (:mod:`.items`),
and produce an :class:`~.items.ImportSet` (nothing written: the preview). Names in any script get
distinct document ids (:mod:`.names`); :func:`~.writing.apply_import_set` writes them through the
store's own services in resumable batches and counts what it wrote (:mod:`.writing`). Idempotent.
"""

from dokoro_store.moving.importers.items import ImportedNote, ImportSet
from dokoro_store.moving.importers.knowledge_graph import read_knowledge_graph
from dokoro_store.moving.importers.notes import read_notes_folder
from dokoro_store.moving.importers.writing import ImportOutcome, apply_import_set, preview_of

__all__ = [
    "ImportOutcome",
    "ImportSet",
    "ImportedNote",
    "apply_import_set",
    "preview_of",
    "read_knowledge_graph",
    "read_notes_folder",
]
