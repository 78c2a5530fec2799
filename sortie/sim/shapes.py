"""Body shapes shared by the bodies that move and the navigation graph that plans for them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WalkerShape:
    """A walking agent as an upright cylinder (metres, degrees)."""

    radius: float = 0.3
    height: float = 1.8
    eye: float = 1.6
    step: float = 0.35
    """Highest rise climbed without a ramp (stairs' risers must be lower)."""
    max_slope: float = 35.0
    """Steepest walkable slope, in degrees."""


@dataclass(frozen=True, slots=True)
class MultirotorShape:
    """A multirotor as a sphere of ``radius`` metres around its centre."""

    radius: float = 0.4


WALKER = WalkerShape()
MULTIROTOR = MultirotorShape()
PLANNING = WalkerShape(step=0.25)
"""The walker as the navigation graph plans for it: stairs (risers <= 0.18 m) and curbs, but
not a log or a rounded rock 0.3 m high, whose steep sides the walker cannot stand on."""
MANIPULATOR = WalkerShape(radius=0.3, height=1.3, eye=1.1, step=0.25)
"""A mobile manipulator's base and head: radius 0.3 m, head camera at 1.1 m."""
