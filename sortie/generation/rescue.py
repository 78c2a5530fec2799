"""Rescue episodes: ``(level, world, seed, index) -> EpisodeSpec`` under each level's rules.

Episode ``index`` draws everything from ``numpy.random.default_rng([seed, index])``: the
world's seed, where the stretcher (and ambulance) stand, the start, the casualty and its
clothes, the reference view and the clue's wording. A candidate that breaks a rule
(docs/rescue.md, Rules; ``LEVELS``) is dropped with its reason and the next draw is tried:
a few per world, then a new world, up to a bound; then the generation fails naming the
level, the world and the reasons. Every kept episode has been completed by the oracle.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sortie.core.episode import EpisodeSpec, Placement, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose
from sortie.generation.clues import ClueFacts, write_clue
from sortie.generation.rejected import Rejected
from sortie.generation.request import Echo, GenerateRequest, block_settings, write_generated
from sortie.generation.rescue_places import (
    Footprint,
    Site,
    lying_yaw,
    pick_casualty,
    pick_start,
    place_stretcher_site,
)
from sortie.generation.rescue_views import Views, check_sight, reference_view
from sortie.generation.validate import DECIMALS, Measures, Validator
from sortie.missions.rescue.spec import LEVELS, Level, LevelRules, RescueData
from sortie.sim.assets.people import random_outfit
from sortie.sim.assets.vehicles import random_plate
from sortie.sim.navigation import NavGraph
from sortie.sim.placements import OUTFIT_FIELDS, with_placements
from sortie.sim.shapes import PLANNING
from sortie.sim.worlds import WORLDS, build_world

GENERATOR = "sortie.generation.rescue"
GENERATOR_VERSION = "2"
"""Bump when a change to generation changes any episode (the suites then get a new version)."""
WORLD_ATTEMPTS = 12
"""Worlds tried per episode before giving up."""
DRAWS_PER_WORLD = 8
"""Start and casualty draws per world (building a world's graph costs more than a draw)."""
L2_LIGHTING = ("day", "overcast", "dusk")
"""L2 varies the lighting (docs/rescue.md, Rules: levels)."""


def parse_level(level: str | Level) -> Level:
    """Return ``level`` as a Level, accepting ``L3`` or ``l3``; raise naming the levels."""
    try:
        return Level(str(level).upper())
    except ValueError:
        raise ConfigError(
            f"rescue: unknown level {level!r}; allowed: {', '.join(v.value for v in Level)}"
        ) from None


def generate_rescue(
    level: str | Level,
    worlds: str | Sequence[str],
    count: int,
    seed: int,
    suite: str,
    validator: Validator | None = None,
) -> list[EpisodeSpec]:
    """Return ``count`` episodes of ``level``, taking ``worlds`` in turn, ids ``suite/0000``..."""
    names = [worlds] if isinstance(worlds, str) else list(worlds)
    if count < 0 or not names:
        raise ConfigError(f"rescue: need a count >= 0 and a world, got {count} and {names}")
    validator = validator or Validator()
    return [
        generate_episode(level, names[i % len(names)], seed, i, f"{suite}/{i:04d}", validator)
        for i in range(count)
    ]


def generate_rescue_suite(request: GenerateRequest, echo: Echo) -> None:
    """Write ``count`` rescue episodes of one level (in ``world``, or the level's in turn)."""
    if request.level is None:
        raise ConfigError("generate rescue: --level is required (L1..L5)")
    parsed = parse_level(request.level)
    worlds = (request.world,) if request.world else LEVELS[parsed].worlds
    path = request.out or Path(f"rescue-{parsed.value.lower()}-seed{request.seed}.jsonl")
    started = time.perf_counter()
    episodes = generate_rescue(parsed, worlds, request.count, request.seed, path.stem)
    settings = block_settings(parsed.value, worlds, request)
    write_generated(path, (GENERATOR, GENERATOR_VERSION), settings, episodes)
    echo(f"{path}: {len(episodes)} episodes in {time.perf_counter() - started:.1f} s")


def generate_episode(
    level: str | Level,
    world: str,
    seed: int,
    index: int,
    episode_id: str,
    validator: Validator | None = None,
) -> EpisodeSpec:
    """Return episode ``index`` of the draw ``seed`` for ``level`` in ``world``.

    Raises:
        ConfigError: if the level is unknown, the world unknown, or no candidate satisfied
            the level's rules within the bound (the message lists the reasons).
    """
    level = parse_level(level)
    WORLDS.get(world)  # an unknown world fails here, with suggestions
    rng = np.random.default_rng([seed, index])
    validator = validator or Validator()
    reasons: Counter[str] = Counter()
    for _ in range(WORLD_ATTEMPTS):
        params: dict[str, float | int | str] = {}
        if level is Level.L2:
            params["lighting"] = str(rng.choice(L2_LIGHTING))
        spec = WorldSpec(builder=world, seed=int(rng.integers(2**31)), params=params)
        try:
            found = _in_world(level, spec, rng, episode_id, validator, reasons)
        except Rejected as why:
            reasons[str(why)] += 1
            continue
        if found is not None:
            return found
    summary = "; ".join(f"{why} ({n}x)" for why, n in reasons.most_common())
    raise ConfigError(
        f"rescue {level.value} in world {world!r} (seed {seed}, episode {index}): "
        f"no valid episode after {WORLD_ATTEMPTS} worlds: {summary}"
    )


def _in_world(
    level: Level,
    world: WorldSpec,
    rng: np.random.Generator,
    episode_id: str,
    validator: Validator,
    reasons: Counter[str],
) -> EpisodeSpec | None:
    """Return an episode in ``world``, or None once every draw was rejected (counted)."""
    scene = build_world(world.builder, world.seed, world.params)
    site = Site(scene, NavGraph.build(scene, PLANNING))
    stretcher, ambulance = place_stretcher_site(site, rng)
    for _ in range(DRAWS_PER_WORLD):
        try:
            draft = _draft(level, world, site, rng, episode_id, stretcher, ambulance)
            return _finish(level, draft, site, rng, validator)
        except Rejected as why:
            reasons[str(why)] += 1
    return None


def _draft(
    level: Level,
    world: WorldSpec,
    site: Site,
    rng: np.random.Generator,
    episode_id: str,
    stretcher: Footprint,
    ambulance: Footprint | None,
) -> EpisodeSpec:
    """Return the episode's layout (no mission data yet), checked on the bare world's graph."""
    rules = LEVELS[level]
    start = pick_start(site, rng, stretcher, ambulance)
    casualty = pick_casualty(site, rng, start, rules.distance, rules.min_height_change)
    yaw = lying_yaw(site, rng, casualty)
    a, b = site.graph.node_position(start), site.graph.node_position(casualty)
    if rules.door_on_path and not site.graph.doors_on_every_shortest_path(a, b):
        raise Rejected("no closed door on every shortest path")
    outfit = random_outfit(rng)
    dressed = {"posture": "lying", **{f: getattr(outfit, f) for f in OUTFIT_FIELDS}}
    placements = [
        Placement(asset="person", name="casualty", pose=_pose(b, yaw), attributes=dressed),
        _placed(site, "stretcher", stretcher, {}),
    ]
    if ambulance is not None:
        placements.append(_placed(site, "ambulance", ambulance, {"plate": random_plate(rng)}))
    start_yaw = round(float(rng.uniform(-180.0, 180.0)), 1)
    return EpisodeSpec(
        episode_id=episode_id,
        family="rescue",
        level=level.value,
        world=world,
        start=_pose(a, start_yaw),
        placements=placements,
        targets={p.name: p.name for p in placements},
    )


def _finish(
    level: Level, draft: EpisodeSpec, site: Site, rng: np.random.Generator, validator: Validator
) -> EpisodeSpec:
    """Return ``draft`` with its mission data, after the view, distance and oracle checks."""
    rules = LEVELS[level]
    scene = with_placements(site.scene, draft.placements, draft.world.seed)
    views = Views(scene, "casualty")
    casualty = draft.placements[0]
    start = draft.start.position()
    if level in (Level.L1, Level.L3):
        check_sight(views, start, hidden=rules.hidden_from_start)
    view = reference_view(views, site, rng, casualty.pose.position())
    measures = validator.measure(draft, rules)
    facts = ClueFacts(
        casualty.attributes,
        casualty.pose.position(),
        start,
        site.surface(_node(site, casualty.pose)),
        len(measures.doors_on_path),
    )
    data = _data(rules, write_clue(rules.clue_style, scene, facts, rng), view, measures)
    spec = draft.model_copy(update={"mission": data.model_dump()})
    path = validator.replay(spec)
    full = data.model_copy(update={"reference_path": path})
    return draft.model_copy(update={"mission": full.model_dump()})


def _data(rules: LevelRules, clue: str, view: list[float], measures: Measures) -> RescueData:
    return RescueData(
        clue_text=clue,
        reference_view=view,
        budget_s=rules.budget_s,
        path_distance=measures.path_distance,
        shortest_length=measures.shortest_length,
        doors_on_path=list(measures.doors_on_path),
    )


def _placed(site: Site, name: str, footprint: Footprint, attributes: dict[str, str]) -> Placement:
    height = site.height(footprint.x, footprint.y, footprint.z)
    pose = _pose((footprint.x, footprint.y, height), footprint.yaw)
    return Placement(asset=name, name=name, pose=pose, attributes=attributes)


def _pose(point: tuple[float, float, float], yaw: float) -> Pose:
    x, y, z = (round(float(v), DECIMALS) for v in point)
    return Pose(x, y, z, round(float(yaw), 1))


def _node(site: Site, pose: Pose) -> int:
    node = site.graph.nearest_node(pose.position(), tolerance=0.5)
    if node is None:
        raise Rejected("casualty off the walkable floor")
    return node
