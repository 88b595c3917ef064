"""dokoro planning server: planning helpers answered from the store's hybrid search and plans."""
