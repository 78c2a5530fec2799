"""The rescue brief's goal images: what each stage leads to, as a picture (docs/rescue.md).

RescueBench gives one goal image, the casualty's ``reference``; its image-goal agents (ViNT,
NoMaD) bring their own picture of the stretcher for the way back. sortie also renders the
``stretcher`` and, outdoors, the ``ambulance``, the way it renders the reference: a walker's
eye view aimed at the object, taken with the run's camera. Each is taken where the expert's
way back (the episode's ``reference_path``) came within a few metres of the object, short of
any closed door on the line of sight; an episode without that path takes them from its start
(2–6 m from the stretcher). A view is a function of the episode alone, so the same episode
gives the same images.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sortie.core.episode import EpisodeSpec
from sortie.missions.rescue.settings import GoalImages
from sortie.missions.rescue.spec import RescueData

Point = tuple[float, float, float]

EYE_HEIGHT = 1.6
"""The walker's eyes above its feet (docs/rescue.md, The task): where a goal view is taken."""
AIM_HEIGHT = {"stretcher": 0.6, "ambulance": 1.4}
"""Height above an object's base its view aims at: the stretcher's frame below its mattress
(0.8 m), the ambulance's red stripe (1.0–1.25 m) and lettering."""
DISTANCE = {"stretcher": (3.0, 5.0), "ambulance": (6.0, 9.0)}
"""Horizontal distance from a goal view's eye to its object, metres: the reference view's for
the stretcher, and enough for the whole ambulance (5.6 m long) to fit in a 90° view."""
SAME_FLOOR = 0.5
"""Largest height between the eye's feet and an object's base for both to be on one floor."""
DOOR_HALF_WIDTH = 1.2
"""Half the widest opening a door or gate fills (2 m), with a margin, metres: a line of sight
passing closer than this to a door's base point is taken to cross the door."""
DOORWAY = 0.6
"""A position this close to a door's base point stands in its doorway, metres (a walker's
width): the closed door would fill the view."""
GOALS_OF_STAGE: Mapping[str, tuple[str, ...]] = {
    "S1": ("reference",),
    "S2": ("reference",),
    "S3": ("ambulance", "stretcher"),
    "S4": ("stretcher",),
}
"""The images that show each stage's goal, best first (a room has no ambulance)."""


@dataclass(frozen=True, slots=True)
class GoalView:
    """A camera pose a goal image is rendered from: eye position (m), yaw and pitch (degrees)."""

    x: float
    y: float
    z: float
    yaw: float
    pitch: float


def goal_names(goal_images: GoalImages) -> tuple[str, ...]:
    """Return the names of the goal images a brief may hold under ``goal_images``."""
    if goal_images is GoalImages.RESCUEBENCH:
        return ("reference",)
    return ("reference", "stretcher", "ambulance")


def goal_views(
    spec: EpisodeSpec,
    data: RescueData,
    goal_images: GoalImages,
    position_of: Callable[[str], Point] | None,
    doors: Sequence[Point] = (),
) -> dict[str, GoalView]:
    """Return the camera pose of every goal image the brief of ``spec`` holds, by name.

    ``position_of`` gives an object's base point (None: the backend cannot say, so only the
    reference, whose pose the episode stores, can be rendered); ``doors`` are the base points
    of the world's doors and gates.
    """
    views = {"reference": GoalView(*data.reference_view)}
    if goal_images is GoalImages.RESCUEBENCH or position_of is None:
        return views
    start = spec.start
    home = (start.x, start.y, start.z)
    for role, aim in AIM_HEIGHT.items():
        if role in spec.targets:
            x, y, z = position_of(spec.targets[role])
            feet = approach(data.reference_path, (x, y, z), DISTANCE[role], doors) or home
            views[role] = aimed_at((feet[0], feet[1], feet[2] + EYE_HEIGHT), (x, y, z + aim))
    return views


def approach(
    path: Sequence[Sequence[float]],
    target: Point,
    distance: tuple[float, float],
    doors: Sequence[Point] = (),
) -> Point | None:
    """Return where the expert stood about ``distance`` from ``target`` on its way there.

    The expert's path is walked back from its end (the hand-off) to the first position at
    least the shorter distance away. The walk stops earlier, at the last position before it,
    where the path leaves the target's floor, goes beyond the longer distance or a door stands
    between it and the target (closed when the goal images are taken, it would hide the
    target). None: the path is empty or ends at such a place.
    """
    lo, hi = distance
    tx, ty, tz = target
    found = None
    for x, y, z in reversed(path):
        away = math.hypot(x - tx, y - ty)
        if away > hi or abs(z - tz) > SAME_FLOOR or _door_between(x, y, target, doors):
            break
        found = (x, y, z)
        if away >= lo:
            break
    return found


def _door_between(x: float, y: float, target: Point, doors: Sequence[Point]) -> bool:
    """Return whether a door stands across the line from (x, y) to ``target``, or at (x, y)."""
    tx, ty, _ = target
    dx, dy = tx - x, ty - y
    length2 = dx * dx + dy * dy
    if length2 == 0.0:
        return False
    for px, py, _ in doors:
        if math.hypot(px - x, py - y) <= DOORWAY:
            return True  # standing in the doorway, where the closed door is
        t = ((px - x) * dx + (py - y) * dy) / length2
        side = abs((px - x) * dy - (py - y) * dx) / math.sqrt(length2)
        if 0.0 < t < 1.0 and side <= DOOR_HALF_WIDTH:
            return True
    return False


def aimed_at(eye: Point, target: Point) -> GoalView:
    """Return the view from ``eye`` whose optical axis passes through ``target``."""
    dx, dy, dz = (t - e for t, e in zip(target, eye, strict=True))
    yaw = math.degrees(math.atan2(dy, dx))
    pitch = math.degrees(math.atan2(dz, math.hypot(dx, dy)))
    return GoalView(*eye, round(yaw, 1), round(pitch, 1))


def goal_of_stage(stage: str, images: Mapping[str, object]) -> str | None:
    """Return the name of the image in ``images`` that shows ``stage``'s goal, or None."""
    return next((name for name in GOALS_OF_STAGE.get(stage, ()) if name in images), None)
