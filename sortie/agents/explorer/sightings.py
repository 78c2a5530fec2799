"""Objects of interest seen in one frame: people, the stretcher, the ambulance, doors."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.agents.explorer.odometry import Odometry
from sortie.agents.explorer.perception import Kind, colour_match, ray_slopes


@dataclass(frozen=True, slots=True)
class Sighting:
    """One object instance seen in a frame, located in the map frame.

    Attributes:
        kind: what it is.
        instance: its instance id.
        x: mean x of its visible surface, metres.
        y: mean y of its visible surface, metres.
        top: height of its highest visible point above the estimated feet, metres.
        nearest: horizontal distance from the body to its nearest visible point, metres.
        bearing: angle from the heading to its nearest visible point, degrees.
        pixels: how many pixels it covers.
        colour: how well its colours match the clue (0..1; people only, else 1).
    """

    kind: Kind
    instance: int
    x: float
    y: float
    top: float
    nearest: float
    bearing: float
    pixels: int
    colour: float = 1.0

    @property
    def lying(self) -> bool:
        """Return whether a person lies down (no visible part above knee height)."""
        return self.top < 0.9


def find_objects(
    depth: NDArray[np.float32],
    semantic: NDArray[np.int32],
    rgb: NDArray[np.uint8] | None,
    kinds: NDArray[np.int8],
    pose: Odometry,
    eye: float,
    hfov: float,
    wanted: tuple[str, ...],
    min_pixels: int = 6,
) -> list[Sighting]:
    """Return a sighting for every object of interest that covers ``min_pixels`` pixels."""
    ids = np.clip(semantic, 0, len(kinds) - 1)
    mask = (kinds[ids] > 0) & np.isfinite(depth)
    rows, cols = np.nonzero(mask)
    if len(rows) == 0:
        return []
    found = ids[rows, cols]
    left, up = ray_slopes(depth.shape[0], depth.shape[1], hfov)
    sightings = []
    for instance in np.unique(found):
        pick = found == instance
        if np.count_nonzero(pick) < min_pixels:
            continue
        r, c = rows[pick], cols[pick]
        colours = rgb[r, c] if rgb is not None else np.zeros((0, 3), np.uint8)
        sightings.append(
            _sighting(
                Kind(int(kinds[instance])),
                int(instance),
                depth[r, c],
                left[r, c],
                up[r, c],
                colours,
                pose,
                eye,
                wanted,
            )
        )
    return sightings


def _sighting(
    kind: Kind,
    instance: int,
    d: NDArray[np.float32],
    lx: NDArray[np.float32],
    uz: NDArray[np.float32],
    rgb: NDArray[np.uint8],
    pose: Odometry,
    eye: float,
    wanted: tuple[str, ...],
) -> Sighting:
    """Locate one instance's pixels (planar depth ``d``, ray slopes ``lx``, ``uz``)."""
    lateral = d * lx
    ranges = np.hypot(d, lateral)
    near = int(np.argmin(ranges))
    c, s = math.cos(math.radians(pose.yaw)), math.sin(math.radians(pose.yaw))
    x = pose.x + float(np.mean(d * c - lateral * s))
    y = pose.y + float(np.mean(d * s + lateral * c))
    top = eye + float(np.max(d * uz))
    bearing = math.degrees(math.atan2(float(lateral[near]), float(d[near])))
    colour = colour_match(rgb, wanted) if kind is Kind.PERSON else 1.0
    return Sighting(kind, instance, x, y, top, float(ranges[near]), bearing, len(d), colour)
