"""The multirotor: a sphere that flies straight moves along its body axes and stops at contacts.

Each translation is one batch of rays cast along the move through points spread over the
sphere's leading half; the sphere stops where the first of them meets something, so a move ends
at the obstacle (touching it, less a small skin) and reports it. Turns change only the yaw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.core.actions import FlightPrimitive
from sortie.core.errors import InvalidPoseError, ParameterError, SimulationError
from sortie.core.pose import Pose, wrap_degrees
from sortie.sim.linear import product
from sortie.sim.raycast import RayCaster
from sortie.sim.shapes import MULTIROTOR, MultirotorShape

SKIN = 0.005
"""Gap (metres, along the move) kept from what the body touches."""

# Sweep rays through the leading hemisphere: its tip, then rings of 16 points at 22.5, 45, 67.5
# and 90 degrees from the move's axis. Seen along the move, the rings sit 0.15, 0.28, 0.37 and
# 0.4 m from the axis for r = 0.4 and neighbours are at most 0.16 m apart, narrower than a
# 0.1 m-radius pole, so no pole in the swept disc slips between rays. Each ray starts on the
# sphere's cross-section through its centre and its lead to the sphere's surface is taken off
# the hit distance, so something already poking into the leading half is still seen from
# outside and stops the move.
_POLAR = np.radians([22.5, 45.0, 67.5, 90.0])
_AZIMUTH = np.radians(np.arange(0.0, 360.0, 22.5))

# Body axes of the translations, as (forward, left, up) components.
_AXES: dict[FlightPrimitive, tuple[float, float, float]] = {
    FlightPrimitive.FORWARD: (1.0, 0.0, 0.0),
    FlightPrimitive.BACKWARD: (-1.0, 0.0, 0.0),
    FlightPrimitive.LEFT: (0.0, 1.0, 0.0),
    FlightPrimitive.RIGHT: (0.0, -1.0, 0.0),
    FlightPrimitive.UP: (0.0, 0.0, 1.0),
    FlightPrimitive.DOWN: (0.0, 0.0, -1.0),
}


@dataclass(frozen=True, slots=True)
class FlyResult:
    """What one flight primitive did.

    Attributes:
        pose: where the body is now (z: the centre's height).
        distance: how far the centre moved, metres (0 for turns).
        contact: name of the object that stopped the move, or None.
    """

    pose: Pose
    distance: float
    contact: str | None = None


class Multirotor:
    """A flying body on a ray-cast scene; its pose's z is the height of its centre."""

    def __init__(self, caster: RayCaster, shape: MultirotorShape = MULTIROTOR) -> None:
        """Create a multirotor; call ``place`` before ``fly``.

        Args:
            caster: ray caster of the scene to fly in.
            shape: the body's sphere.
        """
        self.caster = caster
        self.shape = shape
        self._names = ("",) + tuple(o.name for o in caster.scene.objects)
        self._pose: Pose | None = None
        self._sweep, self._lead = _hemisphere(shape.radius)

    @property
    def pose(self) -> Pose:
        """Return the current pose; raise SimulationError before ``place``."""
        if self._pose is None:
            raise SimulationError("Multirotor: pose read before place() was called")
        return self._pose

    def place(self, pose: Pose) -> Pose:
        """Put the multirotor at ``pose`` and return the pose used.

        Raises:
            InvalidPoseError: if the pose is outside the scene's bounds horizontally, closer
                than the radius to geometry, inside something, or not above any ground.
        """
        xmin, ymin, xmax, ymax = self.caster.scene.bounds
        if not (xmin <= pose.x <= xmax and ymin <= pose.y <= ymax):
            raise InvalidPoseError(
                f"multirotor at {pose}: outside the scene bounds "
                f"x {xmin:g}..{xmax:g}, y {ymin:g}..{ymax:g}"
            )
        self._check_clear(pose)
        self._pose = Pose(pose.x, pose.y, pose.z, wrap_degrees(pose.yaw))
        return self._pose

    def fly(self, primitive: FlightPrimitive, magnitude: float) -> FlyResult:
        """Execute ``primitive``: move ``magnitude`` metres along a body axis, or turn degrees.

        A negative magnitude moves or turns the other way. A move stops at the first contact.
        """
        if not math.isfinite(magnitude):
            raise ParameterError(f"Multirotor.fly: magnitude must be finite, got {magnitude}")
        pose = self.pose
        if primitive in (FlightPrimitive.TURN_LEFT, FlightPrimitive.TURN_RIGHT):
            turn = magnitude if primitive is FlightPrimitive.TURN_LEFT else -magnitude
            self._pose = Pose(pose.x, pose.y, pose.z, wrap_degrees(pose.yaw + turn))
            return FlyResult(self._pose, 0.0)
        direction = _world_axis(_AXES[primitive], pose.yaw) * math.copysign(1.0, magnitude)
        distance, contact = self._sweep_to(pose, direction, abs(magnitude))
        x, y, z = np.array(pose.position()) + direction * distance
        self._pose = Pose(float(x), float(y), float(z), pose.yaw)
        return FlyResult(self._pose, distance, contact)

    def _sweep_to(
        self, pose: Pose, direction: NDArray[np.float64], length: float
    ) -> tuple[float, str | None]:
        """Return how far the sphere moves along ``direction``, at most ``length``, and what hit."""
        if length <= 0.0:
            return 0.0, None
        side, up = _perpendiculars(direction)
        frame = np.stack((direction, side, up))
        origins = np.array(pose.position()) + product(self._sweep, frame)
        directions = np.broadcast_to(direction, origins.shape)
        hits = self.caster.cast(origins, directions, self._lead + (length + SKIN))
        # Faces seen from behind are the way out of something the body is already in.
        facing = product(self.caster.table.normal[hits.triangle], direction) < 0
        t = np.where(facing, hits.t - self._lead, np.inf)
        j = int(np.argmin(t))
        if not np.isfinite(t[j]):
            return length, None
        name = self._names[int(self.caster.object_ids(hits)[j])]
        # Never backwards, and float32 noise from a body resting within the skin is no move.
        distance = min(float(t[j]) - SKIN, length)
        return (distance if distance > 1e-6 else 0.0), name

    def _check_clear(self, pose: Pose) -> None:
        """Raise if the sphere at ``pose`` touches geometry, is inside it or has no ground."""
        directions = np.vstack((_sphere_directions(), [[0.0, 0.0, -1.0]]))
        origins = np.broadcast_to(np.array(pose.position()), directions.shape)
        tmax = np.append(np.full(len(directions) - 1, self.shape.radius - 1e-3), np.inf)
        hits = self.caster.cast(origins, directions, tmax)
        ids = self.caster.object_ids(hits)
        near = np.isfinite(hits.t[:-1])
        if near.any():
            name = self._names[int(ids[int(np.argmax(near))])]
            raise InvalidPoseError(
                f"multirotor at {pose}: within {self.shape.radius:g} m of {name!r}"
            )
        ground_nz = float(self.caster.table.normal[hits.triangle[-1], 2])
        if not np.isfinite(hits.t[-1]) or ground_nz <= 0:
            where = f"inside {self._names[int(ids[-1])]!r}" if ground_nz < 0 else "not above ground"
            raise InvalidPoseError(f"multirotor at {pose}: {where}")


def _world_axis(axis: tuple[float, float, float], yaw: float) -> NDArray[np.float64]:
    """Return a body axis ``(forward, left, up)`` in world coordinates for heading ``yaw``."""
    forward, left, up = axis
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    return np.array([forward * c - left * s, forward * s + left * c, up])


def _perpendiculars(direction: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """Return two unit vectors perpendicular to ``direction`` and to each other."""
    helper = np.array([0.0, 0.0, 1.0]) if abs(direction[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    side = np.cross(helper, direction)
    side /= np.linalg.norm(side)
    return side, np.cross(direction, side)


def _hemisphere(radius: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the sweep origins in the move's frame (along, side, up), and their leads."""
    polar = np.concatenate(([0.0], np.repeat(_POLAR, len(_AZIMUTH))))
    azimuth = np.concatenate(([0.0], np.tile(_AZIMUTH, len(_POLAR))))
    origins = np.column_stack(
        (np.zeros(len(polar)), np.sin(polar) * np.cos(azimuth), np.sin(polar) * np.sin(azimuth))
    )
    return radius * origins, radius * np.cos(polar)


def _sphere_directions() -> NDArray[np.float64]:
    """Return 26 unit directions: to the faces, edges and corners of a cube."""
    grid = np.array(
        [
            (i, j, k)
            for i in (-1, 0, 1)
            for j in (-1, 0, 1)
            for k in (-1, 0, 1)
            if (i, j, k) != (0, 0, 0)
        ],
        np.float64,
    )
    return grid / np.linalg.norm(grid, axis=1, keepdims=True)
