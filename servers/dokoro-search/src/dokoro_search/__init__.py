"""dokoro search server: documents, hybrid search, markdown search and ambient git context."""
