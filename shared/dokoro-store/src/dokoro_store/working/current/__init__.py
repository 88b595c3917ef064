"""``current.md``: the service that regenerates and edits it (door: :mod:`.service`) and the one
cross-process lock every writer of the file takes (:mod:`.file`).
"""
