"""Full text (door: :mod:`.index`): FTS5 or tsvector behind one interface, and the planner that turns
a question into queries that find things (:mod:`.planner`).
"""
