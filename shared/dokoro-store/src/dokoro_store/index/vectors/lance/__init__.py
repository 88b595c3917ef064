"""LanceDB as the embedded vector engine (door: :mod:`.engine`): its table (:mod:`.table`) and the
database side of its copy of the vectors (:mod:`.mirror`).
"""
