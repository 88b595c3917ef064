"""A question about one speaker of the chat lines it finds: its vector leg reads what it asks as well.

Chat turns stored one per document open with their speaker (``"Ana: I flew to Lisbon"``), and a
question about a person names them ("What does Ana do to relax?"). Embedded whole, the name pulls
the query's vector toward every line that mentions Ana — her own small talk, the other speaker's
"Thanks, Ana!" — as much as toward what is asked. Who speaks is the re-ranker's ``speaker`` feature
(:mod:`.rerank`); the vector leg should weigh what is said.

So when the full-text leg's best hits show that the query names exactly one speaker of them, the
vector leg searches with the query's vector blended with the vector of the same query less that
name (:func:`without_speaker`, :func:`blend`: their normalised sum). A query that names no
speaker, or several ("What do Ana and Ben both like?"), embeds as it is.

Measured on LoCoMo (``bench/locomo_retrieval.py``, row ``-speaker-query`` turns it off): R@10
+0.003 on the tune fold, +0.005 on the report fold, MRR@10 +0.008 / +0.009; multi-hop +0.026 /
+0.016. Blending with weight 1 (the plain sum) was chosen on the tune fold against 0.5 and 2 and
against the query less the name alone (tune +0.007 R@10 but report −0.001, temporal −0.012 on both);
a query naming two speakers blended too gave tune R@10 +0.000.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from dokoro_store.index.ranking.rerank import speaker_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

__all__ = ["SPEAKER_HITS", "blend", "without_speaker"]

SPEAKER_HITS = 20  # the full-text leg's best hits whose speakers are read
_WORD = re.compile(r"\w+", re.UNICODE)


def without_speaker(query: str, texts: Iterable[str]) -> str | None:
    """``query`` less the name of the one speaker of ``texts`` (``"<title>\\n<content>"``, chat turns or
    not) it names, with a possessive ``'s``; None when it names none of them or several, or when
    nothing but the name (and punctuation) would be left."""
    words = {w.lower() for w in _WORD.findall(query)}
    named: list[tuple[str, ...]] = []
    for text in texts:
        names = speaker_of(text)
        if names and all(w.lower() in words for w in names) and tuple(names) not in named:
            named.append(tuple(names))
    if len(named) != 1:
        return None
    rest = query
    for word in named[0]:
        rest = re.sub(r"(?<!\w)" + re.escape(word) + r"(?:['\u2019]s)?(?!\w)", " ", rest, flags=re.IGNORECASE)
    rest = " ".join(rest.split())
    return rest if _WORD.search(rest) else None


def blend(query: Vector, other: Vector) -> Vector:
    """The normalised sum of two query vectors (unit length, float32)."""
    import numpy as np

    total = query + other
    norm = float(np.linalg.norm(total))
    return (total / norm if norm else query).astype(np.float32)
