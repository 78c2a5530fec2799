"""Path-similarity and path-efficiency metrics shared by every family (docs/rescue.md, Metrics).

DTW sums Euclidean distances along the optimal alignment (the definition of the VLN
literature and of docs/rescue.md), computed by dtaidistance's C implementation.
"""

from __future__ import annotations

import math

import numpy as np
from dtaidistance import dtw_ndim
from numpy.typing import ArrayLike

GROUND_THRESHOLD = 3.0
AIR_THRESHOLD = 20.0
HS_SCALE = 50.0
"""Metres of mean DTW deviation at which RescueBench's human similarity reaches 0."""


def path_length(points: ArrayLike) -> float:
    """Return the length of a polyline of 2D or 3D points."""
    array = np.asarray(points, dtype=float)
    if len(array) < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(array, axis=0), axis=1).sum())


def dtw(reference: ArrayLike, query: ArrayLike) -> float:
    """Return the DTW distance: the sum of point distances along the best alignment."""
    ref, qry = _points(reference), _points(query)
    # distance_fast is the C implementation; plain distance() loops in Python per cell.
    return float(dtw_ndim.distance_fast(ref, qry, inner_dist="euclidean"))


def ndtw(reference: ArrayLike, query: ArrayLike, threshold: float = GROUND_THRESHOLD) -> float:
    """Return normalised DTW, ``exp(-DTW / (|R| * threshold))``, in (0, 1]."""
    ref = _points(reference)
    return ndtw_of(dtw(ref, query), len(ref), threshold)


def ndtw_of(distance: float, reference_length: int, threshold: float = GROUND_THRESHOLD) -> float:
    """Return nDTW from a DTW distance already computed against a reference of that length."""
    return math.exp(-distance / (reference_length * threshold))


def sdtw(
    success: bool, reference: ArrayLike, query: ArrayLike, threshold: float = GROUND_THRESHOLD
) -> float:
    """Return success-weighted nDTW: nDTW if the episode succeeded, else 0."""
    return ndtw(reference, query, threshold) if success else 0.0


def ends_near(reference: ArrayLike, query: ArrayLike, threshold: float = GROUND_THRESHOLD) -> bool:
    """Return whether the path ends within ``threshold`` of the reference's end (r4r's success).

    r4r's DTW code (google-research ``r4r/dtw.py``) weights nDTW by this test, not by the
    task's success: its SDTW is ``sdtw(ends_near(reference, query), reference, query)``.
    """
    ref, qry = _points(reference), _points(query)
    return bool(np.linalg.norm(qry[-1] - ref[-1]) <= threshold)


def spl(success: bool, shortest: float, taken: float) -> float:
    """Return success weighted by path length, ``S * L / max(P, L)``, clamped to [0, 1]."""
    if not success:
        return 0.0
    if shortest <= 0.0:
        return 1.0
    return min(1.0, max(0.0, shortest / max(taken, shortest)))


def human_similarity(reference: ArrayLike, query: ArrayLike, scale: float = HS_SCALE) -> float:
    """Return RescueBench's HS, ``max(0, 1 - DTW / max(n, m) / scale)`` over 3D positions."""
    ref, qry = _points(reference), _points(query)
    return human_similarity_of(dtw(ref, qry), len(ref), len(qry), scale)


def human_similarity_of(distance: float, n: int, m: int, scale: float = HS_SCALE) -> float:
    """Return HS from a DTW distance between paths of ``n`` and ``m`` points."""
    return max(0.0, 1.0 - distance / max(n, m) / scale)


def _points(points: ArrayLike) -> np.ndarray:
    array = np.asarray(points, dtype=np.double)
    if array.ndim != 2 or len(array) == 0:
        raise ValueError(f"expected a non-empty (n, d) array of points, got shape {array.shape}")
    return np.ascontiguousarray(array)
