"""dokoro analytics server: status, velocity, timeline and weekly compression from the store's rows."""
