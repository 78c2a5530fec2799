"""What the heuristic agent makes of one frame: objects of a class, where they are, how they look.

The semantic image holds instance ids, so every object is already its own blob; the brief's
label map names its class. Depth turns a blob's pixels into points in the body frame
(forward, left, up; metres) through a pinhole camera pitched down, so the agent knows how far
ahead, aside and below each object is without knowing its own position.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.agents.explorer.perception import colour_match, colour_names, ray_slopes

MIN_PIXELS = 12
"""Blobs smaller than this are noise or too far to act on."""


@dataclass(frozen=True, slots=True)
class Blob:
    """One object of the wanted class in the current image.

    Attributes:
        instance: its instance id in the semantic image.
        pixels: how many pixels it covers.
        column: mean column of its pixels, 0..1 across the image.
        row: mean row of its pixels, 0..1 down the image.
        forward: median distance ahead of the body, metres (horizontal).
        left: median distance to the left, metres.
        up: height of its top above the body, metres (negative: below).
        match: share of the wanted colours its pixels show (1.0 when none wanted).
        box: (row0, col0, row1, col1) of its pixels, end exclusive.
    """

    instance: int
    pixels: int
    column: float
    row: float
    forward: float
    left: float
    up: float
    match: float
    box: tuple[int, int, int, int]

    @property
    def distance(self) -> float:
        """Return the straight-line distance to the blob, metres."""
        return math.sqrt(self.forward**2 + self.left**2 + self.up**2)

    @property
    def salience(self) -> float:
        """Return how much the blob stands out: its size, less the farther off-centre it lies.

        Of two matching objects the one looked at is more likely the one meant.
        """
        off_centre = math.hypot(self.column - 0.5, self.row - 0.5) / math.sqrt(0.5)
        return math.sqrt(self.pixels) * (1.0 - 0.8 * off_centre)


def body_points(
    depth: NDArray[np.float32],
    rows: NDArray[np.intp],
    cols: NDArray[np.intp],
    hfov: float,
    pitch: float,
) -> tuple[NDArray[np.float64], ...]:
    """Return (forward, left, up) body-frame points of the given pixels of a pitched camera."""
    left_slope, up_slope = ray_slopes(depth.shape[0], depth.shape[1], hfov)
    d = depth[rows, cols].astype(np.float64)
    x, y, z = d, d * left_slope[rows, cols], d * up_slope[rows, cols]
    c, s = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
    return x * c - z * s, y, x * s + z * c


def find_blobs(
    semantic: NDArray[np.int32],
    depth: NDArray[np.float32],
    rgb: NDArray[np.uint8] | None,
    instances: NDArray[np.bool_],
    colours: tuple[str, ...],
    hfov: float,
    pitch: float,
) -> list[Blob]:
    """Return the blobs of the wanted instances (``instances[id]`` True), best match first."""
    ids = np.clip(semantic, 0, len(instances) - 1)
    wanted = instances[ids] & (semantic > 0) & np.isfinite(depth)
    rows, cols = np.nonzero(wanted)
    blobs = []
    for instance in np.unique(semantic[rows, cols]):
        mine = semantic[rows, cols] == instance
        if int(mine.sum()) >= MIN_PIXELS:
            blobs.append(
                _blob(int(instance), rows[mine], cols[mine], depth, rgb, colours, hfov, pitch)
            )
    return sorted(blobs, key=lambda b: (-b.match, -b.salience, b.instance))


def _blob(
    instance: int,
    rows: NDArray[np.intp],
    cols: NDArray[np.intp],
    depth: NDArray[np.float32],
    rgb: NDArray[np.uint8] | None,
    colours: tuple[str, ...],
    hfov: float,
    pitch: float,
) -> Blob:
    forward, left, up = body_points(depth, rows, cols, hfov, pitch)
    match = colour_match(rgb[rows, cols], colours) if rgb is not None else 1.0
    box = (int(rows.min()), int(cols.min()), int(rows.max()) + 1, int(cols.max()) + 1)
    return Blob(
        instance,
        len(rows),
        float(cols.mean() + 0.5) / depth.shape[1],
        float(rows.mean() + 0.5) / depth.shape[0],
        float(np.median(forward)),
        float(np.median(left)),
        float(np.max(up)),
        match,
        box,
    )


def height_above_ground(depth: NDArray[np.float32], hfov: float, pitch: float) -> float | None:
    """Return how far the surfaces seen below the body lie under it, metres (None: nothing).

    The median over the lower half of the image: mostly ground from a drone's height.
    """
    rows, cols = np.nonzero(np.isfinite(depth[depth.shape[0] // 2 :]))
    if len(rows) == 0:
        return None
    _, _, up = body_points(depth, rows + depth.shape[0] // 2, cols, hfov, pitch)
    return float(-np.median(up))


# --- how things look ------------------------------------------------------------------------
def colour_of(rgb: NDArray[np.uint8]) -> str | None:
    """Return the colour name most of the (N, 3) pixels carry, or None for no pixels."""
    if len(rgb) == 0:
        return None
    names = Counter(str(n) for n in colour_names(rgb))
    return min(names.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def top_pixels(
    depth: NDArray[np.float32],
    semantic: NDArray[np.int32],
    instance: int,
    hfov: float,
    pitch: float,
    band: float = 1.5,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Return (rows, cols) of an instance's pixels within ``band`` metres of its top (a roof)."""
    rows, cols = np.nonzero((semantic == instance) & np.isfinite(depth))
    if len(rows) == 0:
        return rows, cols
    _, _, up = body_points(depth, rows, cols, hfov, pitch)
    keep = up >= up.max() - band
    return rows[keep], cols[keep]


def guess_species(rgb: NDArray[np.uint8], size: float) -> str:
    """Return a species from an animal's pixels and its size (its points' extent, metres).

    Striped black and white is a zebra, yellow or orange a giraffe, brown a deer; a grey
    animal is an elephant when large and a rhino otherwise.
    """
    names = Counter(str(n) for n in colour_names(rgb)) if len(rgb) else Counter()
    total = max(sum(names.values()), 1)
    share = {name: count / total for name, count in names.items()}
    if share.get("white", 0) > 0.2 and share.get("black", 0) > 0.2:
        return "zebra"
    if share.get("yellow", 0) + share.get("orange", 0) + share.get("beige", 0) > 0.35:
        return "giraffe"
    if share.get("brown", 0) > 0.35:
        return "deer"
    return "elephant" if size > 4.0 else "rhino"


def guess_statue(width: float, height: float) -> str:
    """Return a statue's kind from its extent: obelisks are tall and thin, horses long."""
    if height > 2.5 * max(width, 0.1):
        return "obelisk"
    return "horse" if width > 1.2 * height else "figure"


def extent(
    depth: NDArray[np.float32],
    semantic: NDArray[np.int32],
    instance: int,
    hfov: float,
    pitch: float,
) -> tuple[float, float]:
    """Return an instance's horizontal and vertical extent from its visible points, metres."""
    rows, cols = np.nonzero((semantic == instance) & np.isfinite(depth))
    if len(rows) < 2:
        return 0.0, 0.0
    forward, left, up = body_points(depth, rows, cols, hfov, pitch)
    lo, hi = np.percentile(np.stack([forward, left, up]), [5, 95], axis=1)
    span = hi - lo
    return float(math.hypot(span[0], span[1])), float(span[2])
