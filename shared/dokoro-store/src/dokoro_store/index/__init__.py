"""The index engine under search and recall (door: :class:`~.config.RetrievalConfig`).

- :mod:`.config` — how the engine is configured, passed in by the entry point.
- :mod:`.embedders` — the :class:`~.embedders.handle.Embedder` protocol and the lazy handle that
  picks the bundled ONNX model, the static model, Ollama or the hashing floor.
- :mod:`.vectors` — the vector index: exact scan, LanceDB, pgvector.
- :mod:`.fulltext` — FTS5 / tsvector and the query planner.
- :mod:`.ranking` — fusion, hybrid scoring, the re-ranker, calibration, hits.
- :mod:`.chunking`, :mod:`.dates`, :mod:`.scope`, :mod:`.arithmetic` — chunks, dates in text,
  filters inside a search, vector arithmetic.

Below the memory layers: nothing here imports a layer. numpy, model2vec, lancedb and pyarrow load
on first use.
"""
