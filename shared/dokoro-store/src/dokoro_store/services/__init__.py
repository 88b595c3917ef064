"""Services of the store, one module per concern."""
