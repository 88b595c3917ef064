"""Vectors held in memory as the rows of one float32 matrix, with a few typed columns beside them:
rows appended in batches (the matrix grown by doubling), a row removed by moving the last one into
its place, so the rows in use are always ``[0, len)`` and a scan is one matrix-vector product.

The storage under :class:`~.memory_index.MemoryIndex`; it knows nothing of what a row stands for.
Not thread-safe: its owner holds the lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RowMatrix"]


class RowMatrix:
    """``matrix[:len]`` (float32, ``dim`` wide) and one array per column, row for row."""

    def __init__(self, dim: int, capacity: int, columns: Mapping[str, Any]) -> None:
        """``columns``: name → numpy dtype of each column kept beside the vectors."""
        import numpy as np

        capacity = max(1, capacity)
        self.dim = dim
        self.matrix: Any = np.zeros((capacity, dim), dtype=np.float32)
        self.columns: dict[str, Any] = {name: np.zeros(capacity, dtype=dtype) for name, dtype in columns.items()}
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def vectors(self) -> Any:
        """The rows in use (a view)."""
        return self.matrix[: self._used]

    def column(self, name: str) -> Any:
        """One column's values of the rows in use (a view)."""
        return self.columns[name][: self._used]

    def append(self, vectors: Any, **values: Any) -> int:
        """Add ``vectors`` (rows of ``dim`` floats) with their columns' ``values`` (one each, or one
        for all); the index of the first new row."""
        start = self._used
        end = start + int(vectors.shape[0])
        if end > self.matrix.shape[0]:
            capacity = max(end, self.matrix.shape[0] * 2)
            self.matrix = _grown(self.matrix, capacity, start)
            self.columns = {name: _grown(array, capacity, start) for name, array in self.columns.items()}
        self.matrix[start:end] = vectors
        for name, value in values.items():
            self.columns[name][start:end] = value
        self._used = end
        return start

    def remove(self, row: int) -> int | None:
        """Drop ``row``: the last row takes its place. The index that row had (now ``row``), or None
        when ``row`` was the last."""
        last = self._used - 1
        self._used = last
        if row == last:
            return None
        self.matrix[row] = self.matrix[last]
        for array in self.columns.values():
            array[row] = array[last]
        return last


def _grown(array: Any, capacity: int, used: int) -> Any:
    import numpy as np

    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:used] = array[:used]
    return grown
