"""The committed aerial suites: blocks of one type combination each, over the flight worlds.

MissionBench's 120 missions are 37.5% reporting, 26.7% inspection, 13.3% manipulation and
47.5% patrol by tag (125% in all: a quarter of its missions carry two tags). ``aerial-v1``
matches those tag counts (45 / 32 / 16 / 57 of 120) with 15 reporting+inspection and 15
patrol+reporting missions; ``aerial-test-v1`` is the same mix at a quarter (30, the size of
the paper's test split); ``aerial-smoke-v1`` holds one mission of each single type per world.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader
from sortie.generation.aerial import (
    COMBINATIONS,
    GENERATOR,
    GENERATOR_VERSION,
    check_world,
    generate_aerial,
    generate_mission,
    parse_types,
)
from sortie.generation.aerial_checks import AerialValidator
from sortie.generation.plans import build_suite, numbered_jobs
from sortie.generation.request import Echo, GenerateRequest, block_settings, write_generated
from sortie.sim.worlds import FLIGHT_WORLDS

WORLDS = tuple(FLIGHT_WORLDS)


@dataclass(frozen=True, slots=True)
class AerialBlock:
    """``count`` missions of ``types`` drawn from ``seed``, over ``worlds`` in turn."""

    types: str
    count: int
    seed: int
    worlds: tuple[str, ...] = WORLDS


@dataclass(frozen=True, slots=True)
class AerialPlan:
    """An aerial suite's name and blocks; mission ids run ``name/0000`` on across blocks."""

    name: str
    blocks: tuple[AerialBlock, ...]

    def settings(self) -> dict[str, dict[str, object]]:
        """Return the header's record of seeds, counts and worlds per block."""
        return {
            "seeds": {b.types: b.seed for b in self.blocks},
            "counts": {b.types: b.count for b in self.blocks},
            "worlds": {b.types: list(b.worlds) for b in self.blocks},
        }

    def jobs(self) -> list[tuple[AerialBlock, int, str]]:
        """Return every mission as (block, index in the block, mission id), in file order."""
        return numbered_jobs(self.name, self.blocks)

    def episode(
        self,
        block: AerialBlock,
        index: int,
        episode_id: str,
        validator: AerialValidator | None = None,
    ) -> EpisodeSpec:
        """Return one mission (regenerated alone, as the whole suite would make it)."""
        world = block.worlds[index % len(block.worlds)]
        return generate_mission(block.types, world, block.seed, index, episode_id, validator)

    def build(
        self, on_episode: Callable[[EpisodeSpec], None] = lambda e: None
    ) -> tuple[SuiteHeader, list[EpisodeSpec]]:
        """Generate the suite; return its header and missions."""
        validator = AerialValidator()

        def make(block: AerialBlock, index: int, episode_id: str) -> EpisodeSpec:
            return self.episode(block, index, episode_id, validator)

        return build_suite(self, make, (GENERATOR, GENERATOR_VERSION), on_episode)


def _mix(name: str, counts: tuple[int, ...], seed: int, rotate: bool = False) -> AerialPlan:
    """Return a plan with ``counts`` missions of each combination, seeds ``seed`` + 100·k.

    ``rotate`` starts block k's turn of the worlds at world k, so that small blocks (the
    test suite's four missions) do not all skip the last world.
    """
    kinds = (
        "reporting",
        "inspection",
        "manipulation",
        "patrol",
        "reporting+inspection",
        "patrol+reporting",
    )
    blocks = []
    for k, (kind, count) in enumerate(zip(kinds, counts, strict=True)):
        shift = k % len(WORLDS) if rotate else 0
        blocks.append(AerialBlock(kind, count, seed + 100 * k, WORLDS[shift:] + WORLDS[:shift]))
    return AerialPlan(name, tuple(blocks))


AERIAL_SUITES: dict[str, AerialPlan] = {
    plan.name: plan
    for plan in (
        _mix("aerial-v1", (15, 17, 16, 42, 15, 15), 100),
        _mix("aerial-test-v1", (4, 4, 4, 10, 4, 4), 1100, rotate=True),
        AerialPlan(
            "aerial-smoke-v1",
            tuple(
                AerialBlock(kind, len(WORLDS), 9100 + 100 * k)
                for k, kind in enumerate(("reporting", "inspection", "manipulation", "patrol"))
            ),
        ),
    )
}
"""The aerial suites by name (``sortie.generation.suites.SUITES`` includes them)."""


def generate_aerial_suite(request: GenerateRequest, echo: Echo) -> None:
    """Write ``count`` aerial missions of ``types`` (in ``world``, or the flight worlds)."""
    if request.types is None:
        raise ConfigError(f"generate aerial: --type is required ({', '.join(COMBINATIONS)})")
    tags = "+".join(t.value for t in parse_types(request.types))
    worlds = (request.world,) if request.world else WORLDS
    for name in worlds:
        check_world(name)
    path = request.out or Path(f"aerial-{tags.replace('+', '-')}-seed{request.seed}.jsonl")
    started = time.perf_counter()
    missions = generate_aerial(tags, worlds, request.count, request.seed, path.stem)
    made_by = (GENERATOR, GENERATOR_VERSION)
    write_generated(path, made_by, block_settings(tags, worlds, request), missions)
    echo(f"{path}: {len(missions)} missions in {time.perf_counter() - started:.1f} s")
