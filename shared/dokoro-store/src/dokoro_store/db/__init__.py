"""Database plumbing: engine, dialect operations, column types and migrations."""
