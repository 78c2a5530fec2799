"""The navigation graph's edges as compressed rows: arrays, without scipy's sparse matrices.

Node ``i``'s neighbours are ``indices[indptr[i]:indptr[i + 1]]``, in increasing order, at the
distances ``data`` in the same places: the arrays of the canonical ``scipy.sparse.csr_matrix``
of the same edges. Searches and components run on these arrays in the extension
(``kernels``); ``scipy.sparse`` (a tenth of a second to import) is loaded only where numpy's
forms need it, when the extension is not built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix


@dataclass(frozen=True, slots=True, eq=False)
class Edges:
    """Symmetric weighted edges between ``len(indptr) - 1`` nodes, as compressed rows."""

    indptr: NDArray[np.int32]
    """(N + 1,) where each node's row starts, then the end of the last."""
    indices: NDArray[np.int32]
    """(E,) the neighbour of each entry, increasing within a row."""
    data: NDArray[np.float64]
    """(E,) the length of each entry's edge in metres."""

    @classmethod
    def of(cls, matrix: csr_matrix) -> Edges:
        """Return the edges of a scipy CSR matrix (made canonical: sorted, no repeats)."""
        matrix.sum_duplicates()
        return cls(
            np.ascontiguousarray(matrix.indptr, np.int32),
            np.ascontiguousarray(matrix.indices, np.int32),
            np.ascontiguousarray(matrix.data, np.float64),
        )

    @property
    def node_count(self) -> int:
        """Return the number of nodes."""
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        """Return the number of entries: each edge twice, once from either end."""
        return len(self.indices)

    def rows(self) -> NDArray[np.int32]:
        """Return the node each entry starts from, (E,)."""
        return np.repeat(np.arange(self.node_count, dtype=np.int32), np.diff(self.indptr))

    def among(self, usable: NDArray[np.bool_]) -> Edges:
        """Return the edges whose two ends are both ``usable`` (in the same order)."""
        rows = self.rows()
        keep = usable[rows] & usable[self.indices]
        counts = np.bincount(rows[keep], minlength=self.node_count)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        return Edges(indptr, self.indices[keep], self.data[keep])

    def same_as(self, other: Edges) -> bool:
        """Return whether both hold the same edges, lengths and all."""
        return (
            np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.data, other.data)
        )

    def scipy(self) -> csr_matrix:
        """Return these edges as a scipy CSR matrix (for numpy's forms of the searches)."""
        from scipy.sparse import csr_matrix

        n = self.node_count
        return csr_matrix((self.data, self.indices, self.indptr), shape=(n, n))
