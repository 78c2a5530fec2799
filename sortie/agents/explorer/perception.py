"""What the explorer makes of one frame: points in its own map frame, and the objects it knows.

The camera model is the one a depth sensor's data sheet gives: a pinhole with a horizontal
field of view and planar depth (each pixel's ray has a forward component of 1, so a point is
``depth * (1, left, up)`` in the camera frame). Semantic images hold instance ids; the brief's
label map (``Brief.semantic_classes``) turns them into classes, as a segmentation sensor's
colour table would. Nothing else about the world is known.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from sortie.agents.explorer.odometry import Odometry

FloatArray = NDArray[np.float32]


class Kind(IntEnum):
    """The classes the explorer tells apart; everything else is scenery."""

    SCENERY = 0
    PERSON = 1
    STRETCHER = 2
    AMBULANCE = 3
    DOOR = 4


_KINDS = {
    "person": Kind.PERSON,
    "stretcher": Kind.STRETCHER,
    "ambulance": Kind.AMBULANCE,
    "door": Kind.DOOR,
    "gate": Kind.DOOR,
}


def kind_table(labels: dict[int, str]) -> NDArray[np.int8]:
    """Return a lookup array from instance id to ``Kind`` for a brief's label map."""
    table = np.zeros(max(labels, default=0) + 1, np.int8)
    for instance, name in labels.items():
        table[instance] = _KINDS.get(name, Kind.SCENERY)
    return table


@lru_cache(maxsize=8)
def ray_slopes(height: int, width: int, hfov: float) -> tuple[FloatArray, FloatArray]:
    """Return each pixel's (left, up) ray components per unit of forward depth, (H, W) each."""
    focal = (width / 2) / math.tan(math.radians(hfov) / 2)
    cols = (np.arange(width) + 0.5 - width / 2) / focal
    rows = (np.arange(height) + 0.5 - height / 2) / focal
    left, up = np.meshgrid(-cols, -rows)
    return left.astype(np.float32), up.astype(np.float32)


@dataclass(frozen=True, slots=True)
class Points:
    """Back-projected pixels in the map frame (metres), with their kind and instance id."""

    x: FloatArray
    y: FloatArray
    z: FloatArray
    kind: NDArray[np.int8]
    instance: NDArray[np.int32]


def back_project(
    depth: FloatArray,
    semantic: NDArray[np.int32],
    kinds: NDArray[np.int8],
    pose: Odometry,
    eye: float,
    hfov: float,
    stride: int = 1,
    max_depth: float = 15.0,
) -> Points:
    """Return the finite depth pixels within ``max_depth`` as map-frame points (pitch 0).

    Args:
        depth: planar depth image, metres (inf: nothing hit).
        semantic: instance ids of the same pixels.
        kinds: lookup from instance id to ``Kind``.
        pose: the estimated pose of the feet; the eye is ``eye`` metres above them.
        eye: eye height above the feet, metres.
        hfov: horizontal field of view, degrees.
        stride: keep every ``stride``-th column (all rows are kept: the ground's far rows
            are sparse already).
        max_depth: farther pixels are dropped (the far floor is seen too obliquely to map).
    """
    left, up = ray_slopes(depth.shape[0], depth.shape[1], hfov)
    d, ids = depth[:, ::stride], semantic[:, ::stride]
    keep = d < max_depth
    d, ids = d[keep], ids[keep]
    lx, uz = left[:, ::stride][keep], up[:, ::stride][keep]
    c, s = math.cos(math.radians(pose.yaw)), math.sin(math.radians(pose.yaw))
    x = (pose.x + d * (c - s * lx)).astype(np.float32, copy=False)
    y = (pose.y + d * (s + c * lx)).astype(np.float32, copy=False)
    z = pose.z + eye + d * uz
    ids = np.clip(ids, 0, len(kinds) - 1)
    return Points(x, y, z, kinds[ids], ids)


# --- colours -----------------------------------------------------------------------------
COLOUR_WORDS = (
    "red",
    "orange",
    "yellow",
    "green",
    "teal",
    "blue",
    "navy",
    "purple",
    "pink",
    "brown",
    "beige",
    "black",
    "white",
    "grey",
)
_NEAR = {
    ("blue", "navy"),
    ("navy", "blue"),
    ("navy", "black"),
    ("grey", "white"),
    ("grey", "black"),
    ("orange", "brown"),
    ("beige", "white"),
    ("pink", "red"),
}


def clue_colours(text: str) -> tuple[str, ...]:
    """Return the colour words a clue mentions, in order (``gray`` read as ``grey``)."""
    words = re.findall(r"[a-z]+", text.lower().replace("gray", "grey"))
    return tuple(dict.fromkeys(w for w in words if w in COLOUR_WORDS))


def colour_names(rgb: NDArray[np.uint8]) -> NDArray[np.str_]:
    """Name the colour of each pixel of an (N, 3) array by hue, saturation and value.

    The rules are the usual ones of colour naming (hue sectors; dark, pale and grey tones), with
    thresholds loose enough that a face in shadow keeps its name.
    """
    v = rgb.max(axis=1).astype(np.float32) / 255
    span = rgb.max(axis=1).astype(np.float32) - rgb.min(axis=1)
    s = np.where(v > 0, span / np.maximum(rgb.max(axis=1), 1), 0.0)
    hue = _hue(rgb.astype(np.float32), span)
    names = np.select(
        [
            v < 0.18,
            (s < 0.2) & (v > 0.78),
            s < 0.2,
            (hue < 15) | (hue >= 345),
            hue < 50,
            hue < 70,
            hue < 165,
            hue < 200,
            hue < 260,
            hue < 320,
        ],
        ["black", "white", "grey", "red", "orange", "yellow", "green", "teal", "blue", "purple"],
        "pink",
    )
    pale = (s < 0.5) & (v > 0.7)
    names = np.where((names == "red") & pale, "pink", names)
    names = np.where((names == "orange") & (s < 0.42) & (v > 0.6), "beige", names)
    names = np.where((names == "orange") & (v < 0.55), "brown", names)
    return np.where((names == "blue") & (v < 0.42), "navy", names)


def _hue(rgb: FloatArray, span: FloatArray) -> FloatArray:
    r, g, b = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    top = rgb.max(axis=1)
    safe = np.maximum(span, 1e-6)
    hue = np.where(
        top == r, ((g - b) / safe) % 6, np.where(top == g, (b - r) / safe + 2, (r - g) / safe + 4)
    )
    return (hue * 60) % 360


def colour_match(rgb: NDArray[np.uint8], wanted: tuple[str, ...], share: float = 0.06) -> float:
    """Return the share of ``wanted`` colours worn by pixels ``rgb`` (1.0 when none wanted).

    A colour counts when at least ``share`` of the pixels carry its name, half when only a
    neighbouring name does (blue for navy, grey for white).
    """
    if not wanted:
        return 1.0
    if len(rgb) == 0:
        return 0.0
    names, counts = np.unique(colour_names(rgb), return_counts=True)
    present = {str(n) for n, c in zip(names, counts, strict=True) if c >= share * len(rgb)}
    score = sum(
        1.0 if w in present else 0.5 if any((w, p) in _NEAR for p in present) else 0.0
        for w in wanted
    )
    return score / len(wanted)
