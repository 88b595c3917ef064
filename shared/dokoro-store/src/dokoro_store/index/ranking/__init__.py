"""Ranking candidates: reciprocal rank fusion (:mod:`.fusion`), score fusion of the legs
(:mod:`.hybrid`, door), thread neighbours (:mod:`.neighbours`), the re-ranker (:mod:`.rerank`),
relevance calibration (:mod:`.calibration`) and hits with why they surfaced (:mod:`.hits`).
"""
