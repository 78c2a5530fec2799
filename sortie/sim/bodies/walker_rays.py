"""The walker's ray layouts: the sweep and samples of a probe, and a standing-body check.

Kept apart from the walker's logic because the geometry of the layout, and the argument for
why no pole or wall slips through it, is a subject of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from sortie.sim.packets import HitArrays, hit_arrays
from sortie.sim.shapes import WalkerShape

CLEARANCE = 0.01
"""Margin (metres) above the step height where the body's collision cylinder starts."""

# The sweep: 17 rays through points of the leading half of the body's outline, 11.25 degrees
# apart, at 3 heights (just above the step height, the middle, just below the top), cast along
# the move. Lateral gaps between rays are at most r*sin(11.25) = 0.06 m for r = 0.3, a third of
# a 0.1 m-radius pole's width, so no pole in the swept band slips between rays, and one that
# meets the body between two rays reaches at most ~6 mm into it (the two outlines' curvatures
# over half a gap); a flat face is met within 5.6 degrees of its nearest point on the outline,
# so the body stops at most r*(1 - cos 5.6) = 1.5 mm closer than touching. Each ray
# starts on the body's cross-section through its centre, not on the outline, and its lead
# r*cos(angle) is taken off the hit distance: what already pokes into the leading half (a pole
# corner that passed between rays) is then still seen from outside, and stops the body instead
# of being walked through. Since the rays cover the whole move rather than testing where it
# ends, no wall is thin enough to tunnel through. Below the step height is ground: the down
# rays handle it.
FAN = np.radians(np.linspace(-90.0, 90.0, 17))
HEIGHTS = 3
# Headroom rays go up from the centre and 5 leading points of the outline at every sample: they
# catch what the sweep's heights miss, such as a table top, before the body walks under it.
RIM = np.radians([-90.0, -45.0, 0.0, 45.0, 90.0])
PER_SAMPLE = 2 + len(RIM)  # one down ray, then the centre's and the rim's up rays


@dataclass(frozen=True, slots=True)
class Template:
    """Ray layout of a probe with ``n`` ground samples, in the move's frame.

    A probe maps it to the world with one matrix product: each origin row holds (along the
    move, to its left, above the feet, sample number, 1), each direction row (along, left, up).
    """

    origins: NDArray[np.float64]  # (N, 5)
    directions: NDArray[np.float64]  # (N, 3)
    lead: NDArray[np.float64]  # the sweep rays' distance from their origin to the outline
    tmax: NDArray[np.float64]  # the sweep rows' value is added per probe

    def buffers(self) -> ProbeBuffers:
        """Return fresh scratch arrays for casting this layout again and again."""
        n = len(self.origins)
        return ProbeBuffers(
            np.empty((n, 3)),
            np.empty((n, 3), np.float32),
            np.empty((n, 3)),
            np.empty((n, 3), np.float32),
            np.empty(len(self.lead)),
            self.tmax.astype(np.float32),
            hit_arrays(n),
        )


@dataclass(frozen=True, slots=True)
class ProbeBuffers:
    """Scratch arrays of one probe layout, so that a probe allocates nothing to build its rays.

    The float64 arrays hold the exact products, the float32 ones what the ray engine takes
    (the same rounding as converting a fresh float64 result).
    """

    origins64: NDArray[np.float64]
    origins: NDArray[np.float32]
    directions64: NDArray[np.float64]
    directions: NDArray[np.float32]
    sweep64: NDArray[np.float64]
    tmax: NDArray[np.float32]
    hits: HitArrays  # what the probe's cast found, read before the next probe


@cache
def template(n: int, radius: float, height: float, base: float, down: float) -> Template:
    """Return the ray layout of a probe with ``n`` samples (cached: a handful of ``n`` occur)."""
    sweep = len(FAN) * HEIGHTS
    sweep_origins = np.column_stack(
        (
            np.zeros(sweep),
            np.tile(radius * np.sin(FAN), HEIGHTS),
            np.repeat(np.linspace(base, height - CLEARANCE, HEIGHTS), len(FAN)),
            np.zeros(sweep),
            np.ones(sweep),
        )
    )
    rim = np.column_stack((radius * np.cos(RIM), radius * np.sin(RIM)))
    sample = np.zeros((PER_SAMPLE, 5))
    sample[:, 2], sample[:, 4] = base, 1.0
    sample[2:, :2] = rim
    samples = np.tile(sample, (n, 1))
    samples[:, 3] = np.repeat(np.arange(1.0, n + 1), PER_SAMPLE)
    sample_dirs = np.zeros((PER_SAMPLE, 3))
    sample_dirs[0, 2], sample_dirs[1:, 2] = -1.0, 1.0
    directions = np.vstack((np.tile([1.0, 0.0, 0.0], (sweep, 1)), np.tile(sample_dirs, (n, 1))))
    sample_tmax = np.array([down] + [height] * (PER_SAMPLE - 1))
    tmax = np.concatenate((np.tile(radius * np.cos(FAN), HEIGHTS), np.tile(sample_tmax, n)))
    lead = tmax[:sweep].copy()
    return Template(np.vstack((sweep_origins, samples)), directions, lead, tmax)


def clearance_rays(
    x: float, y: float, feet: float, shape: WalkerShape
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return rays testing a standing body: 16 radial rays at 3 heights, then one up ray."""
    angles = np.radians(np.arange(0.0, 360.0, 22.5))
    heights = np.linspace(shape.step + CLEARANCE, shape.height - CLEARANCE, HEIGHTS)
    radial = np.column_stack(
        (
            np.tile(np.cos(angles), HEIGHTS),
            np.tile(np.sin(angles), HEIGHTS),
            np.zeros(len(angles) * HEIGHTS),
        )
    )
    origins = np.column_stack(
        (
            np.full(len(radial) + 1, x),
            np.full(len(radial) + 1, y),
            feet + np.append(np.repeat(heights, len(angles)), shape.step + CLEARANCE),
        )
    )
    directions = np.vstack((radial, [[0.0, 0.0, 1.0]]))
    # Touching is allowed: only geometry closer than the radius (less 1 mm) intersects.
    tmax = np.append(np.full(len(radial), shape.radius - 1e-3), np.inf)
    return origins, directions, tmax
