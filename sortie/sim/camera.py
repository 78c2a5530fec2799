"""Pinhole cameras: intrinsics, and the rays through every pixel for a given pose."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ParameterError


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
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
    return (rz @ ry).astype(np.float32)


def world_rays(spec: CameraSpec, yaw: float, pitch: float | None = None) -> NDArray[np.float32]:
    """Return the camera's ray directions in world coordinates, (H*W, 3)."""
    rotation = camera_rotation(yaw, spec.pitch if pitch is None else pitch)
    return local_directions(spec.width, spec.height, spec.hfov) @ rotation.T
