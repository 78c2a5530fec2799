"""Unit and frame conversions between sortie and the external simulators, in one place.

sortie's frame is right-handed: metres, z up, yaw in degrees counter-clockwise seen from
above (0 along +x), in [-180, 180). The conversions below are the only ones the backends and
the importers use.

- Unreal (UnrealCV, RescueBench): centimetres, left-handed, x forward, y right, z up, yaw
  growing clockwise seen from above. sortie's (x, y, z) is Unreal's (x, -y, z) / 100 and
  sortie's yaw is minus Unreal's.
- AirSim (Cosys-AirSim, MissionBench): NED metres, x north, y east, z down, yaw clockwise
  from north. sortie's (x, y, z) is (north, -east, -down): x stays north, y points west, z is
  height; sortie's yaw is minus AirSim's.
"""

from __future__ import annotations

import math

from sortie.core.pose import Pose
from sortie.core.pose import wrap_degrees as _wrap

UNREAL_CM_PER_M = 100.0


def wrap_degrees(angle: float) -> float:
    """Return ``angle`` in [-180, 180), never -0.0 (records stay tidy)."""
    return _wrap(angle) + 0.0


def unreal_point(x: float, y: float, z: float) -> tuple[float, float, float]:
    """Return an Unreal point (cm, left-handed) in sortie's frame (m, right-handed)."""
    s = UNREAL_CM_PER_M
    return (x / s, -y / s + 0.0, z / s)


def unreal_pose(x: float, y: float, z: float, yaw: float) -> Pose:
    """Return an Unreal location and yaw (cm, degrees clockwise) as a sortie pose."""
    return Pose(*unreal_point(x, y, z), wrap_degrees(-yaw))


def to_unreal(pose: Pose) -> tuple[float, float, float, float]:
    """Return a sortie pose as Unreal ``(x, y, z, yaw)``: centimetres, yaw clockwise."""
    s = UNREAL_CM_PER_M
    return (pose.x * s, -pose.y * s + 0.0, pose.z * s, wrap_degrees(-pose.yaw))


def unreal_turn(turn: float) -> float:
    """Return a sortie turn (degrees, counter-clockwise positive) as Unreal's (clockwise)."""
    return -turn + 0.0


def ned_point(north: float, east: float, down: float) -> tuple[float, float, float]:
    """Return an AirSim NED point (m) in sortie's frame: (north, -east, -down)."""
    return (north + 0.0, -east + 0.0, -down + 0.0)


def ned_pose(north: float, east: float, down: float, yaw: float) -> Pose:
    """Return an AirSim NED position and yaw (degrees clockwise from north) as a sortie pose."""
    return Pose(*ned_point(north, east, down), wrap_degrees(-yaw))


def to_ned(pose: Pose) -> tuple[float, float, float, float]:
    """Return a sortie pose as AirSim NED ``(north, east, down, yaw)``, yaw clockwise."""
    return (pose.x + 0.0, -pose.y + 0.0, -pose.z + 0.0, wrap_degrees(-pose.yaw))


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """Return ``(w, x, y, z)`` of a rotation by ``yaw`` degrees about the vertical axis."""
    half = math.radians(yaw) / 2
    return (math.cos(half), 0.0, 0.0, math.sin(half))


def quaternion_yaw(w: float, x: float, y: float, z: float) -> float:
    """Return the yaw (degrees) of quaternion ``(w, x, y, z)`` about its z axis."""
    return math.degrees(math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))
