"""Dead reckoning: the explorer's estimate of its own pose from the motions it commanded.

The walker turns exactly as asked and walks ``speed * dt`` metres along its new heading unless
something stops it, so odometry is exact on open ground. A step that ends in a contact event
was cut short or deflected by an amount the agent cannot observe; the agent then passes a
shortened stride (its guess from depth: none when it walked into a surface head-on, part of it
when it slid along one), so contacts are where the estimate drifts. Height comes from the
map: the feet take the ground height that the map remembers for the cell under the body.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(slots=True)
class Odometry:
    """The estimated pose: position in metres, yaw in degrees CCW from +x, z the feet."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw: float = 0.0

    def advance(self, turn: float, speed: float, dt: float, blocked: bool) -> None:
        """Apply one commanded Move; a blocked step keeps the turn but not the translation."""
        self.yaw = (self.yaw + turn + 180.0) % 360.0 - 180.0
        if blocked:
            return
        rad = math.radians(self.yaw)
        self.x += math.cos(rad) * speed * dt
        self.y += math.sin(rad) * speed * dt

    def bearing_to(self, x: float, y: float) -> float:
        """Return the angle from the heading to point (x, y), degrees in [-180, 180)."""
        angle = math.degrees(math.atan2(y - self.y, x - self.x)) - self.yaw
        return (angle + 180.0) % 360.0 - 180.0

    def distance_to(self, x: float, y: float) -> float:
        """Return the horizontal distance to point (x, y)."""
        return math.hypot(x - self.x, y - self.y)
