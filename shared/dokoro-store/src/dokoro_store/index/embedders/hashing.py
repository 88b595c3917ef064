"""The hashing embedder: a dependency-free floor when no model is available.

Words (lower-cased, light suffix stripping), word pairs and CJK character pairs are hashed
into a fixed number of signed buckets. It finds texts that share words — never paraphrases —
and says so in its label.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dokoro_store.index.arithmetic import FloatMatrix

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _features(text: str) -> list[tuple[str, float]]:
    words: list[str] = []
    features: list[tuple[str, float]] = []
    for token in _WORD.findall(text.lower()):
        if _CJK.search(token):
            features.extend((f"c:{token[i : i + 2]}", 1.0) for i in range(max(1, len(token) - 1)))
            continue
        words.append(_stem(token))
    features.extend((f"w:{word}", 1.0) for word in words)
    features.extend((f"b:{a} {b}", 0.5) for a, b in itertools.pairwise(words))
    return features


class HashingEmbedder:
    """Feature hashing of words: the floor used when no model is available."""

    kind = "hashing"
    id = "hashing:v1-512"
    dimension = 512
    label = "hashing floor (dependency-free; matches shared words, not meaning)"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> FloatMatrix:
        import numpy as np

        from dokoro_store.index.arithmetic import normalise_rows

        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                matrix[row, (value >> 1) % self.dimension] += sign * weight
        return normalise_rows(matrix)
