"""Poses: positions in metres (z up) and headings in degrees counter-clockwise from +x."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sortie.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Pose:
    """A body's position ``[x, y, z]`` (metres) and yaw (degrees, CCW from +x)."""

    x: float
    y: float
    z: float
    yaw: float = 0.0

    @classmethod
    def parse(cls, text: str, where: str = "pose") -> Pose:
        """Parse ``"x,y,z[,yaw]"``, raising ConfigError that names ``where`` on bad input."""
        parts = [p for p in text.replace(" ", "").split(",") if p]
        if len(parts) not in (3, 4):
            raise ConfigError(
                f"{where}: expected 3 or 4 numbers 'x,y,z[,yaw]', got {len(parts)}: {text!r}"
            )
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ConfigError(f"{where}: expected numbers 'x,y,z[,yaw]', got {text!r}") from None
        return cls(*values)

    def as_list(self) -> list[float]:
        """Return ``[x, y, z, yaw]``."""
        return [self.x, self.y, self.z, self.yaw]

    def position(self) -> tuple[float, float, float]:
        """Return ``(x, y, z)``."""
        return (self.x, self.y, self.z)

    def heading(self) -> tuple[float, float]:
        """Return the unit vector of the yaw in the ground plane."""
        rad = math.radians(self.yaw)
        return (math.cos(rad), math.sin(rad))

    def bearing_to(self, x: float, y: float) -> float:
        """Return the angle from this heading to point ``(x, y)``, degrees in [-180, 180)."""
        return wrap_degrees(math.degrees(math.atan2(y - self.y, x - self.x)) - self.yaw)

    def horizontal_distance(self, other: Pose) -> float:
        """Return the distance to ``other`` in the ground plane."""
        return math.hypot(self.x - other.x, self.y - other.y)

    def distance(self, other: Pose) -> float:
        """Return the 3D distance to ``other``."""
        return math.dist(self.position(), other.position())


def wrap_degrees(angle: float) -> float:
    """Wrap an angle in degrees to [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0
