"""Aerial missions: ``(types, world, seed, index) -> EpisodeSpec`` for MissionBench's four types.

Mission ``index`` draws everything from ``numpy.random.default_rng([seed, index, tags])``
(the tags as a CRC-32 of ``reporting+inspection``): the
world's seed, the template (``sortie.generation.aerial_tasks``, or a route for a patrol),
the target, the phrasing, the goal's heading, the start. A goal is observation-ready: the
target's top centred in the −45° camera from a height that suits what must be read (a plate
from 3.5 m above the car, colours and counts from 15 m or more), in free space, with the
target in the middle of the semantic image rendered there. The start is 40–150 m from the
goal, above everything in between, at a random heading; d_max = ¼·|start − goal|. A patrol
starts at its route's first point and ends at its last; its reference path is what the
expert flew, and its d_max is the route's length over 25. Every kept mission was completed
by the expert in a replay; a candidate that breaks a rule is dropped with its reason and
another is drawn, up to a bound, after which generation fails naming the reasons.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Sequence

import numpy as np
from shapely.geometry import LineString, box
from shapely.strtree import STRtree

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import ConfigError, did_you_mean
from sortie.core.pose import Pose
from sortie.generation.aerial_checks import AerialValidator
from sortie.generation.aerial_routes import Patrol, plan_patrol
from sortie.generation.aerial_tasks import (
    INSPECTION,
    MANIPULATION,
    NEEDS,
    REPORTING,
    Maker,
    Task,
    facing_street,
)
from sortie.generation.rejected import Rejected
from sortie.generation.validate import DECIMALS
from sortie.missions.aerial.spec import AerialData, AnswerKind, MissionType
from sortie.sim.scene import Scene
from sortie.sim.worlds import FLIGHT_WORLDS
from sortie.sim.worlds.aerial import viewing_pose

GENERATOR = "sortie.generation.aerial"
GENERATOR_VERSION = "1"
"""Bump when a change to generation changes any mission (the suites then get a new version)."""
COMBINATIONS = (
    "reporting",
    "inspection",
    "manipulation",
    "patrol",
    "reporting+inspection",
    "patrol+reporting",
)
"""The type tags a mission may carry, alone or in the two pairs MissionBench mixes most."""
WORLD_ATTEMPTS = 6
"""Worlds tried per mission before giving up."""
DRAWS_PER_WORLD = 8
"""Templates and targets drawn per world."""
HEADINGS = 6
"""Goal headings tried per target (a wall or a tree may block one side)."""
START_DISTANCE = (40.0, 150.0)
"""Start-to-goal distance, metres (3D)."""
START_CLEARANCE = 8.0
"""Metres the start keeps above everything near the straight line to the goal."""
R_AND_I = (
    "Inspect {s} and report {q}.",
    "Fly to a position where {s} is centred in view, face it, and report {q}.",
    "Hold a close view of {s} and tell me {q}.",
)
PATROL = (
    "Patrol {s} at {a:g} m altitude.",
    "Fly a patrol {s}, holding {a:g} m altitude.",
    "Survey the area {s}, flying at {a:g} m.",
)
P_AND_R = (
    "Patrol {s} at {a:g} m altitude and report how many {n} you counted.",
    "Fly {s} at {a:g} m and count the {n} on the way; report the number.",
)


def parse_types(types: str | Sequence[str]) -> tuple[MissionType, ...]:
    """Return the type tags of ``types`` (``reporting+inspection`` or a list); raise if unknown."""
    text = types if isinstance(types, str) else "+".join(types)
    if text.lower() not in COMBINATIONS:
        raise ConfigError(
            f"aerial: unknown mission type {text!r}; allowed: {', '.join(COMBINATIONS)}"
        )
    return tuple(MissionType(t) for t in text.lower().split("+"))


def check_world(world: str) -> None:
    """Raise naming the flight worlds unless ``world`` is one."""
    if world not in FLIGHT_WORLDS:
        hint = did_you_mean(world, FLIGHT_WORLDS)
        raise ConfigError(
            f"aerial: {world!r} is not a flight world.{hint} Available: {', '.join(FLIGHT_WORLDS)}"
        )


def generate_aerial(
    types: str | Sequence[str],
    worlds: str | Sequence[str],
    count: int,
    seed: int,
    suite: str,
    validator: AerialValidator | None = None,
) -> list[EpisodeSpec]:
    """Return ``count`` missions of ``types``, taking ``worlds`` in turn, ids ``suite/0000``..."""
    names = [worlds] if isinstance(worlds, str) else list(worlds)
    if count < 0 or not names:
        raise ConfigError(f"aerial: need a count >= 0 and a world, got {count} and {names}")
    validator = validator or AerialValidator()
    return [
        generate_mission(types, names[i % len(names)], seed, i, f"{suite}/{i:04d}", validator)
        for i in range(count)
    ]


def generate_mission(
    types: str | Sequence[str],
    world: str,
    seed: int,
    index: int,
    episode_id: str,
    validator: AerialValidator | None = None,
    template: str | None = None,
    rejections: Counter[str] | None = None,
) -> EpisodeSpec:
    """Return mission ``index`` of the draw ``seed`` of ``types`` in flight world ``world``.

    ``template`` fixes the template (a name in ``aerial_tasks``) or, for a patrol, the route;
    ``rejections``, if given, counts the reasons of the candidates dropped on the way.

    Raises:
        ConfigError: an unknown type, world or template, a template about something the world
            lacks, or no valid mission within the bound (the message lists the reasons).
    """
    tags = parse_types(types)
    check_world(world)
    level = "+".join(t.value for t in tags)
    # The tags join the seed, so two types drawn with one seed do not share their draws.
    rng = np.random.default_rng([seed, index, zlib.crc32(level.encode())])
    validator = validator or AerialValidator()
    reasons: Counter[str] = Counter()
    try:
        return _search(tags, world, rng, episode_id, validator, template, reasons)
    except ConfigError as error:
        raise ConfigError(
            f"aerial {level} in world {world!r} (seed {seed}, mission {index}): {error}"
        ) from None
    finally:
        if rejections is not None:
            rejections.update(reasons)


def _search(
    tags: tuple[MissionType, ...],
    world: str,
    rng: np.random.Generator,
    episode_id: str,
    validator: AerialValidator,
    template: str | None,
    reasons: Counter[str],
) -> EpisodeSpec:
    """Return the first candidate that passes every check, counting the rejected ones."""
    for _ in range(WORLD_ATTEMPTS):
        spec = EpisodeSpec(
            episode_id=episode_id,
            family="aerial",
            level="+".join(t.value for t in tags),
            world=WorldSpec(
                builder=world, seed=int(rng.integers(2**31)), params=FLIGHT_WORLDS[world]
            ),
            start=Pose(0.0, 0.0, 0.0),
        )
        scene = validator.scene(spec)
        for _ in range(DRAWS_PER_WORLD):
            try:
                return _draw(tags, spec, scene, rng, validator, template)
            except Rejected as why:
                reasons[str(why)] += 1
    summary = "; ".join(f"{why} ({n}x)" for why, n in reasons.most_common(6))
    raise ConfigError(f"no valid mission after {WORLD_ATTEMPTS} worlds: {summary}")


def _draw(
    tags: tuple[MissionType, ...],
    spec: EpisodeSpec,
    scene: Scene,
    rng: np.random.Generator,
    validator: AerialValidator,
    template: str | None,
) -> EpisodeSpec:
    """Return one candidate mission in ``spec``'s world, or raise Rejected saying why."""
    if MissionType.PATROL in tags:
        return _patrol(tags, spec, scene, rng, validator, template)
    task = _maker(tags, scene, spec.world.builder, rng, template)(scene, spec.world.builder, rng)
    goal = _goal(task, spec, scene, rng, validator)
    start = _start(goal, spec, scene, rng, validator)
    reports = MissionType.REPORTING in tags
    data = AerialData(
        instruction=_phrase(tags, task, rng),
        types=list(tags),
        target=task.target.name,
        goal=goal,
        answer=task.answer if reports else None,
        answer_kind=task.kind,
        task_action=task.task_action,
        max_move=round(math.dist(start.position(), goal.position()) / 4, DECIMALS),
    )
    done = spec.model_copy(
        update={
            "start": start,
            "targets": {"target": task.target.name},
            "mission": data.model_dump(mode="json"),
        }
    )
    validator.replay(done)
    return done


def _maker(
    tags: tuple[MissionType, ...],
    scene: Scene,
    world: str,
    rng: np.random.Generator,
    template: str | None,
) -> Maker:
    """Return the template to draw: ``template``, or one at random among those that apply."""
    makers = {
        MissionType.REPORTING: REPORTING,
        MissionType.INSPECTION: INSPECTION,
        MissionType.MANIPULATION: MANIPULATION,
    }[tags[0]]
    if tags == (MissionType.REPORTING, MissionType.INSPECTION):
        # A pylon is named by its number, so asking for the number would give the answer away.
        makers = {**REPORTING, **{k: v for k, v in INSPECTION.items() if k != "pylon"}}
    if template is not None:
        if template not in makers:
            raise ConfigError(
                f"aerial {'+'.join(tags)}: unknown template {template!r}; "
                f"allowed: {', '.join(makers)}"
            )
        if not scene.of_class(NEEDS[template]):
            raise ConfigError(
                f"aerial {'+'.join(tags)}: template {template!r} is about a "
                f"{NEEDS[template]}, and world {world!r} has none"
            )
        return makers[template]
    usable = [name for name in makers if scene.of_class(NEEDS[name])]
    if not usable:
        raise ConfigError(f"aerial {'+'.join(tags)}: world {world!r} has nothing to ask about")
    return makers[usable[int(rng.integers(len(usable)))]]


def _phrase(tags: tuple[MissionType, ...], task: Task, rng: np.random.Generator) -> str:
    """Return the instruction: one of the task's phrasings, or of the reporting+inspection pair."""
    if tags == (MissionType.REPORTING, MissionType.INSPECTION):
        return R_AND_I[int(rng.integers(len(R_AND_I)))].format(s=task.subject, q=task.question)
    text = task.phrasings[int(rng.integers(len(task.phrasings)))].format(s=task.subject)
    return text[0].upper() + text[1:]


def _goal(
    task: Task,
    spec: EpisodeSpec,
    scene: Scene,
    rng: np.random.Generator,
    validator: AerialValidator,
) -> Pose:
    """Return the first heading's viewing pose that is free and shows the target."""
    facing = facing_street(scene, task.target)
    offset = float(rng.uniform(0.0, 360.0))
    yaws = (
        [facing, facing + 25.0, facing - 25.0]
        if facing is not None
        else [offset + 360.0 * k / HEADINGS for k in range(HEADINGS)]
    )
    why = Rejected("no heading")
    for yaw in yaws:
        pose = _viewing(task, yaw)
        try:
            validator.check_view(spec, pose, task.target.name, tuple(o.name for o in task.counted))
            return pose
        except Rejected as error:
            why = error
    raise why


def _viewing(task: Task, yaw: float) -> Pose:
    """Return the rounded pose centring the task's target (or point) at its height."""
    if task.look_at is None:
        pose = viewing_pose(task.target, task.height, yaw)
    else:
        x, y, z = task.look_at
        rad = math.radians(yaw)
        pose = Pose(
            x - task.height * math.cos(rad), y - task.height * math.sin(rad), z + task.height, yaw
        )
    wrapped = (yaw + 180.0) % 360.0 - 180.0
    x, y, z = (round(float(v), DECIMALS) for v in pose.position())
    return Pose(x, y, z, round(wrapped, 1))


def _start(
    goal: Pose,
    spec: EpisodeSpec,
    scene: Scene,
    rng: np.random.Generator,
    validator: AerialValidator,
) -> Pose:
    """Return a free start 40–150 m from ``goal``, above everything in between."""
    x0, y0, x1, y1 = scene.bounds
    tops = Tops.of(scene)
    for _ in range(8):
        bearing, across = float(rng.uniform(0.0, 2 * math.pi)), float(rng.uniform(35.0, 145.0))
        x, y = goal.x + across * math.cos(bearing), goal.y + across * math.sin(bearing)
        if not (x0 + 5 <= x <= x1 - 5 and y0 + 5 <= y <= y1 - 5):
            continue
        top = tops.along([(goal.x, goal.y), (x, y)], 5.0)
        z = max(goal.z, top + START_CLEARANCE) + float(rng.uniform(0.0, 5.0))
        start = Pose(
            round(x, DECIMALS),
            round(y, DECIMALS),
            round(z, DECIMALS),
            round(float(rng.uniform(-180.0, 180.0)), 1),
        )
        if (
            not START_DISTANCE[0]
            <= math.dist(start.position(), goal.position())
            <= START_DISTANCE[1]
        ):
            continue
        try:
            validator.check_free(spec, start)
            return start
        except Rejected:
            continue
    raise Rejected("no free start 40-150 m from the goal")


class Tops:
    """The tops of a scene's objects, indexed by their ground footprints."""

    _last: tuple[Scene, Tops] | None = None

    def __init__(self, scene: Scene) -> None:
        """Index the objects' footprints."""
        self.boxes = [box(*o.bounds()[0][:2], *o.bounds()[1][:2]) for o in scene.objects]
        self.heights = np.array([float(o.bounds()[1][2]) for o in scene.objects])
        self.tree = STRtree(self.boxes)

    @classmethod
    def of(cls, scene: Scene) -> Tops:
        """Return the index of ``scene`` (the last one is kept: draws reuse their world)."""
        if cls._last is None or cls._last[0] is not scene:
            cls._last = (scene, cls(scene))
        return cls._last[1]

    def along(self, points: Sequence[tuple[float, float]], margin: float) -> float:
        """Return the highest top within ``margin`` of the polyline ``points``."""
        corridor = LineString(points).buffer(margin)
        hits = [i for i in self.tree.query(corridor) if self.boxes[i].intersects(corridor)]
        return float(self.heights[hits].max()) if hits else 0.0


def _patrol(
    tags: tuple[MissionType, ...],
    spec: EpisodeSpec,
    scene: Scene,
    rng: np.random.Generator,
    validator: AerialValidator,
    route: str | None,
) -> EpisodeSpec:
    """Return a patrol (maybe counting along the way) whose reference is the expert's flight."""
    patrol = _route(tags, scene, rng, route)
    x, y, z = patrol.points[0]
    start = Pose(x, y, z, round(float(rng.uniform(-180.0, 180.0)), 1))
    validator.check_free(spec, start)
    counts = MissionType.REPORTING in tags
    phrasings = P_AND_R if counts else PATROL
    text = phrasings[int(rng.integers(len(phrasings)))].format(
        s=patrol.subject, a=patrol.altitude, n=patrol.counted_noun
    )
    data = AerialData(
        instruction=text,
        types=list(tags),
        goal=_end(patrol.points),
        answer=str(len(patrol.counted)) if counts else None,
        answer_kind=AnswerKind.NUMBER if counts else AnswerKind.TEXT,
        patrol=[list(p) for p in patrol.points],
        max_move=patrol.max_move(),
    )
    planned = spec.model_copy(update={"start": start, "mission": data.model_dump(mode="json")})
    flown = _distinct(validator.replay(planned))
    final = data.model_copy(update={"patrol": flown, "goal": _end(flown)})
    done = planned.model_copy(update={"mission": final.model_dump(mode="json")})
    validator.replay(done)
    return done


def _route(
    tags: tuple[MissionType, ...], scene: Scene, rng: np.random.Generator, route: str | None
) -> Patrol:
    """Return the patrol of ``route``, or of a random route (one with something to count)."""
    if route is not None and route not in scene.routes:
        raise ConfigError(
            f"aerial patrol: no route {route!r} in this world; available: "
            f"{', '.join(scene.routes) or 'none'}"
        )
    names = [route] if route else sorted(scene.routes)
    if not names:
        raise ConfigError("aerial patrol: the world has no routes")
    patrol = plan_patrol(scene, names[int(rng.integers(len(names)))], rng)
    if MissionType.REPORTING in tags and not patrol.counted:
        raise Rejected(f"nothing to count along {patrol.route}")
    return patrol


def _end(points: Sequence[Sequence[float]]) -> Pose:
    """Return the route's end, facing along its last leg."""
    (ax, ay, _), (bx, by, bz) = points[-2], points[-1]
    return Pose(
        float(bx), float(by), float(bz), round(math.degrees(math.atan2(by - ay, bx - ax)), 1)
    )


def _distinct(points: list[list[float]]) -> list[list[float]]:
    """Return ``points`` without repeats of the point before (turns do not move)."""
    return [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]
