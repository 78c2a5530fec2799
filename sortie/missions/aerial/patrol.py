"""Patrol coverage: IoU of the 20 m ground buffers around the flown and the reference routes.

Two readings (see ``docs/aerial.md``):

- ``missionbench`` (the default, as MissionBench's code computes it): the flown path is the
  poses after each move, the start left out; both paths are resampled to 100 points evenly
  by **3D** arc length, then projected to the ground and buffered by 20 m. A flown path of
  fewer than 2 poses, or of no 3D length (a hover, turns only), covers nothing: IoU 0.
  (MissionBench's resampling refuses such a path and its evaluation then records no IoU.)
  A path that only climbs or descends has 3D length, and projects to a point: its buffer is
  the 20 m disc around that point. ``mp=missionbench`` reads MP as MissionBench's evaluation
  then falls back (``degenerate``).
- ``start2d`` (sortie before it followed the code): the flown path starts at the start pose,
  and the resampling is even by ground (2D) arc length; a path with no ground translation
  buffers to the disc around its one ground point.
"""

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


def resample(
    points: Sequence[Sequence[float]], count: int = SAMPLES, dimensions: int = 3
) -> NDArray[np.float64]:
    """Return ``count`` ground points (x, y) spread evenly by arc length along ``points``.

    Arc length is measured over the first ``dimensions`` coordinates (3: in space, as
    MissionBench; 2: on the ground). A route of no length gives ``count`` copies of its
    first point.
    """
    array = np.asarray(points, dtype=np.float64)
    steps = np.linalg.norm(np.diff(array[:, :dimensions], axis=0), axis=1)
    along = np.concatenate([[0.0], np.cumsum(steps)])
    if along[-1] <= 0.0:
        return np.repeat(array[:1, :2], count, axis=0)
    wanted = np.linspace(0.0, along[-1], count)
    return np.column_stack(
        [np.interp(wanted, along, array[:, 0]), np.interp(wanted, along, array[:, 1])]
    )


def corridor(
    points: Sequence[Sequence[float]], width: float = BUFFER, dimensions: int = 3
) -> BaseGeometry:
    """Return the ground area within ``width`` of the resampled route."""
    xy = resample(points, dimensions=dimensions)
    if np.allclose(xy, xy[0]):
        return Point(xy[0]).buffer(width)  # a route with no ground translation covers a disc
    return LineString(xy).buffer(width)


def patrol_iou(
    flown: Sequence[Sequence[float]], reference: Sequence[Sequence[float]], width: float = BUFFER
) -> float:
    """Return MissionBench's patrol IoU (0..1) of the flown poses against the reference.

    ``flown`` is the poses after each move, without the start. Fewer than 2 poses, or no
    3D length, give 0; a reference of fewer than 2 points gives NaN (nothing to cover).
    """
    if len(reference) < 2:
        return float("nan")
    if degenerate(flown):
        return 0.0
    return _iou(corridor(flown, width), corridor(reference, width))


def degenerate(flown: Sequence[Sequence[float]]) -> bool:
    """Return whether a flown path has fewer than 2 poses or no 3D length.

    MissionBench's resampling refuses such a path, so its evaluation records no IoU and keeps
    the distance progress as MP (the ``mp=missionbench`` reading, ``sortie.metrics.aerial``).
    """
    return len(flown) < 2 or _length(flown) <= 0.0


def patrol_iou_start2d(
    path: Sequence[Sequence[float]], reference: Sequence[Sequence[float]], width: float = BUFFER
) -> float:
    """Return the ``start2d`` patrol IoU: ``path`` begins at the start, resampled on the ground.

    An empty path or a reference of fewer than 2 points gives NaN.
    """
    if len(path) == 0 or len(reference) < 2:
        return float("nan")
    return _iou(corridor(path, width, 2), corridor(reference, width, 2))


def _iou(a: BaseGeometry, b: BaseGeometry) -> float:
    union = a.union(b).area
    return float(a.intersection(b).area / union) if union > 0 else float("nan")


def _length(points: Sequence[Sequence[float]]) -> float:
    array = np.asarray(points, dtype=np.float64)[:, :3]
    return float(np.linalg.norm(np.diff(array, axis=0), axis=1).sum())
