"""Indexing documents: a batch chunked, embedded and written in one transaction (:mod:`.batch`),
a pass over many as a pipeline (:mod:`.pipeline`, the door), what the index holds (:mod:`.status`),
who follows indexing (:mod:`.listeners`) and vectors written behind (:mod:`.embed_behind`).
"""
