"""Matrix products that give the same bits on every CPU.

numpy's ``@`` on float arrays calls OpenBLAS, which picks its kernel for the CPU it runs on:
with or without fused multiply-adds, summing in other orders. The same product can then differ
in its last bits from one machine to another (measured: 648 of 2,000 entries of a (1000, 2) by
(2, 2) product differ between OpenBLAS's Prescott and Haswell kernels), and a vertex or a ray
that moves by one bit can flip a decision downstream. ``product`` adds the terms in a fixed
order with plain multiplies and adds, which IEEE arithmetic rounds the same way everywhere.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def product(a: NDArray, b: NDArray, out: NDArray | None = None) -> NDArray:
    """Return ``a @ b`` for ``a`` (..., K) and ``b`` (K, M) or (K,), terms added k = 0 .. K-1.

    ``out`` (float64, the result's shape) receives the product instead of a new array. numpy's
    ``einsum`` (without ``optimize``) never calls BLAS and its loops are built for the baseline
    CPU only, so it adds the plain products in order on every machine (a test holds it to the
    sum written out), at two and a half times the speed of writing the sum out here.
    """
    a, b = np.asarray(a), np.asarray(b)
    if b.ndim == 1:
        return product(a, b[:, None])[..., 0]
    if out is None:
        return np.einsum("...k,km->...m", a, b)
    return np.einsum("...k,km->...m", a, b, out=out)


def inverse_rigid(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return the inverse of a 4x4 rotation-and-translation (no LAPACK: the same bits anywhere)."""
    rotation = matrix[:3, :3].T
    inverse = np.eye(4)
    inverse[:3, :3] = rotation
    inverse[:3, 3] = -product(rotation, matrix[:3, 3])
    return inverse
