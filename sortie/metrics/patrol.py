"""Patrol coverage: IoU of the 20 m ground buffers around the flown and the reference routes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry

BUFFER = 20.0
"""Half-width of the corridor around each route, metres (MissionBench)."""
SAMPLES = 100
"""Points each route is resampled to, evenly by arc length."""


def resample(points: Sequence[Sequence[float]], count: int = SAMPLES) -> NDArray[np.float64]:
    """Return ``count`` ground points (x, y) spread evenly by arc length along ``points``.

    A route that never moves gives ``count`` copies of its one position.
    """
    xy = np.asarray(points, dtype=np.float64)[:, :2]
    steps = np.linalg.norm(np.diff(xy, axis=0), axis=1)
    along = np.concatenate([[0.0], np.cumsum(steps)])
    if along[-1] <= 0.0:
        return np.repeat(xy[:1], count, axis=0)
    wanted = np.linspace(0.0, along[-1], count)
    return np.column_stack([np.interp(wanted, along, xy[:, 0]), np.interp(wanted, along, xy[:, 1])])


def corridor(points: Sequence[Sequence[float]], width: float = BUFFER) -> BaseGeometry:
    """Return the ground area within ``width`` of the resampled route."""
    xy = resample(points)
    if np.allclose(xy, xy[0]):
        return Point(xy[0]).buffer(width)  # a route with no translation covers a disc
    return LineString(xy).buffer(width)


def patrol_iou(flown: Sequence[Sequence[float]], reference: Sequence[Sequence[float]],
               width: float = BUFFER) -> float:
    """Return the IoU (0..1) of the corridors around the flown and reference routes."""
    if len(flown) == 0 or len(reference) < 2:
        return float("nan")
    a, b = corridor(flown, width), corridor(reference, width)
    union = a.union(b).area
    return float(a.intersection(b).area / union) if union > 0 else float("nan")
