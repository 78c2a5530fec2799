"""Pinhole cameras: intrinsics, and the rays through every pixel for a given pose."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ParameterError
from sortie.sim.linear import product

BODY_PITCH = {"walker": 0.0, "multirotor": -45.0, "manipulator": -20.0}
"""Default camera pitch of each body, degrees (a manipulator's head looks down at tables)."""


@dataclass(frozen=True, slots=True)
class CameraSpec:
    """A camera's image size (pixels), horizontal field of view and pitch (degrees, up > 0)."""

    width: int = 128
    height: int = 128
    hfov: float = 90.0
    pitch: float = 0.0

    def __post_init__(self) -> None:
        if not (8 <= self.width <= 4096 and 8 <= self.height <= 4096):
            raise ParameterError(
                f"camera: size {self.width}x{self.height} outside the allowed 8..4096 pixels"
            )
        if not 10.0 <= self.hfov <= 170.0:
            raise ParameterError(f"camera: hfov {self.hfov} outside the allowed 10..170 degrees")
        if not -90.0 <= self.pitch <= 90.0:
            raise ParameterError(f"camera: pitch {self.pitch} outside the allowed -90..90 degrees")

    @property
    def focal(self) -> float:
        """Return the focal length in pixels."""
        return (self.width / 2) / math.tan(math.radians(self.hfov) / 2)


@lru_cache(maxsize=32)
def local_directions(width: int, height: int, hfov: float) -> NDArray[np.float32]:
    """Return per-pixel ray directions in the camera frame (x forward, y left, z up), (H*W, 3).

    Each direction has a forward component of exactly 1, so a hit distance along it is the
    depth along the optical axis (planar depth, as depth cameras report it).
    """
    focal = CameraSpec(width, height, hfov).focal
    cols = (np.arange(width) + 0.5 - width / 2) / focal
    rows = (np.arange(height) + 0.5 - height / 2) / focal
    left, up = np.meshgrid(-cols, -rows)
    dirs = np.stack([np.ones_like(left), left, up], axis=-1).reshape(-1, 3)
    dirs.flags.writeable = False
    return dirs.astype(np.float32)


def camera_rotation(yaw: float, pitch: float) -> NDArray[np.float32]:
    """Return the rotation from the camera frame to the world for a yaw and pitch in degrees."""
    cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
    rz = ((cy, -sy, 0.0), (sy, cy, 0.0), (0.0, 0.0, 1.0))
    ry = ((cp, 0.0, -sp), (0.0, 1.0, 0.0), (sp, 0.0, cp))
    # rz @ ry as ``product`` adds it (terms k = 0, 1, 2 in order), in plain floats: a numpy
    # product of two 3x3 costs about 4 µs of every frame, this under 2.
    rows = [[a[0] * ry[0][j] + a[1] * ry[1][j] + a[2] * ry[2][j] for j in range(3)] for a in rz]
    return np.array(rows, np.float32)


def world_rays(spec: CameraSpec, yaw: float, pitch: float | None = None) -> NDArray[np.float32]:
    """Return the camera's ray directions in world coordinates, (H*W, 3).

    The pitched directions are cached per camera; turning them by yaw is then two
    multiply-adds per axis. A general matrix product would call BLAS, whose worker threads
    keep spinning after each call and slow down a second process on the other core.
    """
    return turn_rows(pitched_rays(spec, pitch), yaw_turn(yaw))


def yaw_turn(yaw: float) -> tuple[np.float32, np.float32]:
    """Return the float32 cosine and sine that turn pitched rays by ``yaw`` degrees."""
    return np.float32(math.cos(math.radians(yaw))), np.float32(math.sin(math.radians(yaw)))


def pitched_rays(spec: CameraSpec, pitch: float | None = None) -> NDArray[np.float32]:
    """Return the ray directions at zero yaw as rows x, y, z, (3, H*W), cached per camera.

    Turned by ``yaw_turn`` (``c * x - s * y``, ``s * x + c * y``, ``z`` in float32) they are
    ``world_rays``; the extension turns them itself, pixel by pixel, with the same operations.
    """
    return _pitched(spec.width, spec.height, spec.hfov, spec.pitch if pitch is None else pitch)


def turn_rows(
    rows: NDArray[np.float32], turn: tuple[np.float32, np.float32]
) -> NDArray[np.float32]:
    """Return rays given as rows x, y, z turned by a yaw's float32 cosine and sine, (N, 3).

    ``world_rays``'s operations (``_packets.c`` and ``_raster.c`` repeat them).
    """
    x, y, z = rows
    c, s = turn
    out = np.empty((len(x), 3), np.float32)
    out[:, 0] = c * x - s * y
    out[:, 1] = s * x + c * y
    out[:, 2] = z
    return out


@lru_cache(maxsize=32)
def _pitched(width: int, height: int, hfov: float, pitch: float) -> NDArray[np.float32]:
    """Return the x, y, z rows of the ray directions at zero yaw, (3, N), read-only."""
    rotation = camera_rotation(0.0, pitch).astype(np.float64)
    dirs = local_directions(width, height, hfov).astype(np.float64)
    rows = np.stack(
        [
            np.ascontiguousarray(sum(dirs[:, k] * rotation[row, k] for k in range(3)), np.float32)
            for row in range(3)
        ]
    )
    rows.flags.writeable = False
    return rows


def dynamic_pixels(
    spec: CameraSpec,
    eye: tuple[float, float, float],
    yaw: float,
    pitch: float,
    boxes: NDArray[np.float32],
) -> NDArray[np.intp] | None:
    """Return the pixel indices whose rays may hit any of ``boxes`` (None: maybe all).

    Each box's corners are projected into the image and the bounding rectangle kept; a box
    that straddles the camera plane may cover anything, so it gives None. Casting only these
    rays against moving geometry saves a full second pass per frame.
    """
    if len(boxes) == 0:
        return np.zeros(0, np.intp)
    corners = _box_corners(boxes) - np.asarray(eye, np.float32)
    cam = product(corners, camera_rotation(yaw, pitch))  # world -> camera: R^T, in row form
    forward = cam[..., 0]
    mask = np.zeros((spec.height, spec.width), bool)
    for box_cam, fwd in zip(cam, forward, strict=True):
        if (fwd <= 0.05).all():
            continue
        if (fwd <= 0.05).any():
            return None
        cols = spec.width / 2 - spec.focal * box_cam[:, 1] / fwd
        rows = spec.height / 2 - spec.focal * box_cam[:, 2] / fwd
        c0, c1 = int(max(cols.min() - 1, 0)), int(min(cols.max() + 2, spec.width))
        r0, r1 = int(max(rows.min() - 1, 0)), int(min(rows.max() + 2, spec.height))
        if c0 < c1 and r0 < r1:
            mask[r0:r1, c0:c1] = True
    return np.flatnonzero(mask)


def _box_corners(boxes: NDArray[np.float32]) -> NDArray[np.float32]:
    """Return the 8 corners of each (min, max) box, (K, 8, 3)."""
    low, high = boxes[:, 0], boxes[:, 1]
    picks = np.array([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)], bool)
    return np.where(picks[None], high[:, None], low[:, None]).astype(np.float32)
