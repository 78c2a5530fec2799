"""Geometric queries every backend answers the same way once it can place objects."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

from sortie.core.pose import Pose


class PositionQueries(ABC):
    """Derives the Backend protocol's distance and bearing queries from two primitives."""

    @abstractmethod
    def pose(self) -> Pose:
        """Return the body's pose."""

    @abstractmethod
    def position_of(self, name: str) -> tuple[float, float, float]:
        """Return the base position of object ``name``."""

    def distance_to(self, name: str) -> float:
        """Return the horizontal distance from the body to object ``name``."""
        x, y, _ = self.position_of(name)
        pose = self.pose()
        return math.hypot(x - pose.x, y - pose.y)

    def distance_between(self, a: str, b: str) -> float:
        """Return the horizontal distance between objects ``a`` and ``b``."""
        (ax, ay, _), (bx, by, _) = self.position_of(a), self.position_of(b)
        return math.hypot(ax - bx, ay - by)

    def height_difference(self, name: str) -> float:
        """Return object ``name``'s base height minus the body's height."""
        return self.position_of(name)[2] - self.pose().z

    def bearing_to(self, name: str) -> float:
        """Return the angle from the heading to object ``name``, degrees in [-180, 180)."""
        x, y, _ = self.position_of(name)
        return self.pose().bearing_to(x, y)
