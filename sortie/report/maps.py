"""Top-down maps of episodes: the world from above, the path coloured by stage, key places.

A world's map is rendered once and reused by every episode in it (a suite holds many
episodes per world); the episode's own objects (casualty, stretcher) are drawn as markers
from its spec rather than rendered, which is what makes that reuse possible. Paths are drawn
with Pillow straight onto the map, not with matplotlib: a report has a map per episode, and
this is some twenty times faster (the legend is on the page instead, ``LEGEND``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.pose import Pose
from sortie.core.records import StepRecord
from sortie.missions.registry import FAMILIES
from sortie.report.descriptor import MapMarks, report_of
from sortie.sim.render import Renderer
from sortie.sim.scene import Scene
from sortie.sim.topdown import TopDownMap, render_topdown
from sortie.sim.worlds import build_world

Colour = tuple[int, int, int]
STAGE_COLOURS: dict[str | None, Colour] = {
    "S1": (31, 119, 180),
    "S2": (255, 127, 14),
    "S3": (44, 160, 44),
    "S4": (148, 103, 189),
}
"""Path colour while each stage is active; any other (and after the last) is ``OTHER``."""
OTHER: Colour = (90, 90, 90)
START, CASUALTY, STRETCHER, END, COLLISION, GOAL, ROUTE = (
    (40, 200, 60),
    (214, 39, 40),
    (23, 190, 207),
    (0, 0, 0),
    (255, 0, 0),
    (255, 200, 0),
    (120, 120, 120),
)
LEGEND = (
    ("●", START, "start"),
    ("◆", CASUALTY, "casualty"),
    ("■", STRETCHER, "stretcher"),
    ("⬟", GOAL, "aerial goal"),
    ("┅", ROUTE, "patrol route"),
    ("▲", END, "end"),
    ("×", COLLISION, "collision"),
)
"""The markers as the page's legend shows them: glyph, colour, meaning."""
SIDE = 520
"""Maps are enlarged (by a whole factor, pixels kept square) to about this many pixels."""


@dataclass(frozen=True, slots=True)
class Floor:
    """The heights a floor's map shows: from its slab up to the next floor's (metres)."""

    low: float = -math.inf
    high: float = math.inf
    number: int = 0

    def holds(self, z: float) -> bool:
        """Return whether a body or object standing at height ``z`` is on this floor."""
        return self.low - STAIR_SLACK <= z < self.high - STAIR_SLACK


STAIR_SLACK = 0.5
"""A walker this far below a floor is still on the stairs up to it: it counts as below."""


class WorldMaps:
    """Top-down maps of worlds, each rendered on first use and kept."""

    def __init__(self, metres_per_pixel: float = 0.1, max_pixels: int = 400) -> None:
        """Render maps at ``metres_per_pixel``, coarser when a side would pass ``max_pixels``."""
        self.metres_per_pixel, self.max_pixels = metres_per_pixel, max_pixels
        self._maps: dict[str, list[tuple[Floor, TopDownMap]]] = {}

    def background(self, world: WorldSpec) -> TopDownMap:
        """Return the map of ``world`` (without any episode's placements), enlarged to draw on."""
        return self.floors(world)[0][1]

    def floors(self, world: WorldSpec) -> list[tuple[Floor, TopDownMap]]:
        """Return a map per floor of ``world``, lowest first (one for a world of one floor)."""
        key = world.model_dump_json()
        if key not in self._maps:
            scene = build_world(world.builder, world.seed, world.params)
            renderer = Renderer(scene)
            self._maps[key] = [
                (
                    floor,
                    enlarged(render_topdown(renderer, self.metres_per_pixel, cut, self.max_pixels)),
                )
                for floor, cut in floor_cuts(scene)
            ]
        return self._maps[key]


def floor_cuts(scene: Scene) -> list[tuple[Floor, float | None]]:
    """Return each floor of ``scene`` and the height its map cuts at (the scene's own: None).

    Floors are the ``floor`` objects that name their ``level`` and ``height`` (as ``tower``'s
    do). A floor's map cuts as far under the slab above it as the scene's cut is under the
    first floor's slab; the top floor's cut is as high above it as the scene's above the ground.
    """
    heights = sorted(
        float(o.attributes["height"])
        for o in scene.of_class("floor")
        if "level" in o.attributes and "height" in o.attributes
    )
    if len(heights) < 2 or scene.topdown_cut is None:
        return [(Floor(), None)]
    gap, storey = heights[1] - scene.topdown_cut, scene.topdown_cut - heights[0]
    edges = [-math.inf, *heights[1:], math.inf]
    cuts = [h - gap for h in heights[1:]] + [heights[-1] + storey]
    return [(Floor(edges[k], edges[k + 1], k), cut) for k, cut in enumerate(cuts)]


def enlarged(topdown: TopDownMap, side: int = SIDE) -> TopDownMap:
    """Return the map scaled up by the whole factor that brings its long side near ``side``."""
    factor = max(1, round(side / max(topdown.image.shape[:2])))
    image = np.repeat(np.repeat(topdown.image, factor, axis=0), factor, axis=1)
    return TopDownMap(image, topdown.xmin, topdown.ymax, topdown.metres_per_pixel / factor)


def episode_view(topdown: TopDownMap, spec: EpisodeSpec, steps: Sequence[StepRecord]) -> TopDownMap:
    """Return the part of the world map to draw the episode on.

    Flight worlds are hundreds of metres wide and a flight a few dozen, so a family may ask
    (``MapMarks.crop``) for its maps cropped to the path, the goal and the route (with a
    margin), then enlarged.
    """
    marks = _marks(spec)
    if not marks.crop:
        return topdown
    points = [(spec.start.x, spec.start.y)] + [(s.pose.x, s.pose.y) for s in steps]
    points += list(marks.route) + ([marks.goal[:2]] if marks.goal else [])
    return cropped(topdown, points)


def _marks(spec: EpisodeSpec) -> MapMarks:
    return report_of(spec.family).marks_of(spec) if spec.family in FAMILIES else MapMarks()


def cropped(
    topdown: TopDownMap, points: Sequence[Sequence[float]], margin: float = 15.0
) -> TopDownMap:
    """Return the map cut to the box around ``points`` (plus ``margin`` metres), enlarged."""
    height, width = topdown.image.shape[:2]
    cols, rows = zip(*(topdown.pixel(p[0], p[1]) for p in points), strict=True)
    # Each side at least three quarters of the other, so a straight flight is not drawn as
    # a sliver and the map is wide enough to read beside the frame.
    span = max(max(cols) - min(cols), max(rows) - min(rows)) * 3 / 8
    wide = max(margin / topdown.metres_per_pixel, span - (max(cols) - min(cols)) / 2)
    tall = max(margin / topdown.metres_per_pixel, span - (max(rows) - min(rows)) / 2)
    left, right = max(0, int(min(cols) - wide)), min(width, int(max(cols) + wide) + 1)
    top, bottom = max(0, int(min(rows) - tall)), min(height, int(max(rows) + tall) + 1)
    if right - left < 8 or bottom - top < 8:
        return topdown
    picture = Image.fromarray(topdown.image[top:bottom, left:right])
    factor = SIDE / max(picture.size)
    picture = picture.resize((round(picture.width * factor), round(picture.height * factor)))
    mpp = topdown.metres_per_pixel
    return TopDownMap(
        np.asarray(picture), topdown.xmin + left * mpp, topdown.ymax - top * mpp, mpp / factor
    )


def legend_keys(spec: EpisodeSpec, steps: Sequence[StepRecord]) -> set[str]:
    """Return the meanings of ``LEGEND`` that the episode's map shows."""
    keys = {"start"} | ({"end"} if steps else set())
    poses = {p.name for p in spec.placements}
    keys |= {role for role in ("casualty", "stretcher") if spec.targets.get(role) in poses}
    marks = _marks(spec)
    if marks.goal:
        keys.add("aerial goal")
    if marks.route:
        keys.add("patrol route")
    if any(s.collisions for s in steps):
        keys.add("collision")
    return keys


def draw_episode_map(
    topdown: TopDownMap,
    spec: EpisodeSpec,
    steps: Sequence[StepRecord],
    path: Path,
    floor: Floor | None = None,
) -> Path:
    """Draw the episode's path and places over the world map; save it as a PNG at ``path``.

    With ``floor``, only the steps and places on that floor are drawn.
    """
    picture = Image.fromarray(topdown.image)
    draw = ImageDraw.Draw(picture)
    floor = floor or Floor()
    kept = [s for s in steps if floor.holds(s.pose.z)]
    _draw_route(draw, topdown, spec)
    start = spec.start if floor.holds(spec.start.z) else (kept[0].pose if kept else None)
    if start is not None:
        _draw_path(draw, topdown, start, kept)
    _draw_places(draw, topdown, spec, steps, floor)
    _draw_scale(draw, topdown)
    marks = _marks(spec)
    if marks.altitude:
        picture = _with_altitude(picture, spec, steps, marks.goal)
    path.parent.mkdir(parents=True, exist_ok=True)
    picture.save(path, compress_level=1)  # fast: maps are many, disk is cheap
    return path


def _draw_path(
    draw: ImageDraw.ImageDraw, topdown: TopDownMap, start: Pose, steps: Sequence[StepRecord]
) -> None:
    """Draw one polyline per run of steps in the same stage, in that stage's colour."""
    last = topdown.pixel(start.x, start.y)
    for stage, run in groupby(steps, key=lambda s: s.stage):
        points = [last] + [topdown.pixel(x, y) for s in run for x, y in _travelled(s)]
        draw.line(points, fill=STAGE_COLOURS.get(stage, OTHER), width=2, joint="curve")
        last = points[-1]


def _travelled(step: StepRecord) -> list[tuple[float, float]]:
    """Return where the body went in a step: its family part's path (if any), then its pose."""
    points = [(x, y) for x, y, _ in step.part.path()] if step.part is not None else []
    return [*points, (step.pose.x, step.pose.y)]


def _draw_route(draw: ImageDraw.ImageDraw, topdown: TopDownMap, spec: EpisodeSpec) -> None:
    """Draw a patrol's reference route as a dashed line under the path."""
    route = [topdown.pixel(x, y) for x, y in _marks(spec).route]
    for (x0, y0), (x1, y1) in zip(route, route[1:], strict=False):
        pieces = max(1, int(math.hypot(x1 - x0, y1 - y0) // 6))
        for k in range(0, pieces, 2):  # every other sixth of a leg: a dash, then a gap
            a, b = k / pieces, min(k + 1, pieces) / pieces
            draw.line(
                [x0 + a * (x1 - x0), y0 + a * (y1 - y0), x0 + b * (x1 - x0), y0 + b * (y1 - y0)],
                fill=ROUTE,
                width=4,
            )


def _with_altitude(
    picture: Image.Image,
    spec: EpisodeSpec,
    steps: Sequence[StepRecord],
    goal: tuple[float, float, float] | None,
) -> Image.Image:
    """Return the map with a strip below it: the flight's height over the steps (side view)."""
    width, strip = picture.width, 150
    heights = [spec.start.z] + [s.pose.z for s in steps]
    low = min([*heights, *([goal[2]] if goal else [])])
    high = max([*heights, *([goal[2]] if goal else [])])
    span = max(high - low, 1.0)
    canvas = Image.new("RGB", (width, picture.height + strip), (255, 255, 255))
    canvas.paste(picture, (0, 0))
    draw = ImageDraw.Draw(canvas)
    top, bottom, left = picture.height + 14, picture.height + strip - 10, 40

    def row(z: float) -> float:
        return bottom - (z - low) / span * (bottom - top)

    def col(i: int) -> float:
        return left + i * (width - left - 10) / max(len(heights) - 1, 1)

    if goal:
        draw.line([left, row(goal[2]), width - 10, row(goal[2])], fill=GOAL, width=2)
    draw.line([(col(i), row(z)) for i, z in enumerate(heights)], fill=(31, 119, 180), width=2)
    draw.text((4, top - 12), f"{high:.0f} m", fill=(0, 0, 0))
    draw.text((4, bottom - 8), f"{low:.0f} m", fill=(0, 0, 0))
    draw.text(
        (left, picture.height + 2), "height over the steps (goal height in yellow)", fill=(0, 0, 0)
    )
    return canvas


def _draw_places(
    draw: ImageDraw.ImageDraw,
    topdown: TopDownMap,
    spec: EpisodeSpec,
    steps: Sequence[StepRecord],
    floor: Floor,
) -> None:
    """Mark every collision, the targets, the start and the end (in that order, end on top)."""
    for step in steps:
        if step.collisions and floor.holds(step.pose.z):
            col, row = topdown.pixel(step.pose.x, step.pose.y)
            draw.line([col - 3, row - 3, col + 3, row + 3], fill=COLLISION, width=2)
            draw.line([col - 3, row + 3, col + 3, row - 3], fill=COLLISION, width=2)
    poses = {p.name: p.pose for p in spec.placements}
    for role, shape, colour in (
        ("casualty", "diamond", CASUALTY),
        ("stretcher", "square", STRETCHER),
    ):
        pose = poses.get(spec.targets.get(role, ""))
        if pose is not None and floor.holds(pose.z):
            _marker(draw, topdown.pixel(pose.x, pose.y), shape, colour)
    goal = _marks(spec).goal
    if goal:
        _marker(draw, topdown.pixel(goal[0], goal[1]), "pentagon", GOAL)
    if floor.holds(spec.start.z):
        _marker(draw, topdown.pixel(spec.start.x, spec.start.y), "circle", START)
    if steps and floor.holds(steps[-1].pose.z):
        _marker(draw, topdown.pixel(steps[-1].pose.x, steps[-1].pose.y), "triangle", END)


_SHAPES = {"square": (4, 0.0), "diamond": (4, 45.0), "triangle": (3, 0.0), "pentagon": (5, 0.0)}
"""Regular polygons as (sides, rotation in degrees)."""


def _marker(
    draw: ImageDraw.ImageDraw, at: tuple[int, int], shape: str, colour: Colour, radius: int = 7
) -> None:
    """Draw a filled, white-edged shape so it shows on any floor colour."""
    white = (255, 255, 255)
    if shape == "circle":
        draw.circle(at, radius, fill=colour, outline=white, width=2)
        return
    sides, rotation = _SHAPES[shape]
    draw.regular_polygon(
        (at[0], at[1], radius), sides, rotation=rotation, fill=colour, outline=white, width=2
    )


def _draw_scale(draw: ImageDraw.ImageDraw, topdown: TopDownMap) -> None:
    """Draw a scale bar of a round length (about a fifth of the map) in the lower left."""
    height, width = topdown.image.shape[:2]
    span = width * topdown.metres_per_pixel / 5
    metres = max((m for m in (1, 2, 5, 10, 20, 50, 100) if m <= span), default=1)
    length = round(metres / topdown.metres_per_pixel)
    left, bottom = 10, height - 12
    draw.rectangle([left - 5, bottom - 18, left + length + 5, bottom + 6], fill=(255, 255, 255))
    draw.line([left, bottom, left + length, bottom], fill=(0, 0, 0), width=3)
    draw.text((left, bottom - 16), f"{metres} m", fill=(0, 0, 0))
