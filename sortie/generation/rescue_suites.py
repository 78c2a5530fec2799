"""The committed rescue suites' plans: RescueBench's test split by level, and the smoke suite.

Each suite is a list of blocks (a level, a count, a seed and the worlds taken in turn). Counts
follow RescueBench's test split: 25 / 59 / 59 / 39 / 31 episodes for L1..L5 (213 in all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import SuiteHeader
from sortie.generation.plans import build_suite, numbered_jobs
from sortie.generation.rescue import GENERATOR, GENERATOR_VERSION, generate_episode
from sortie.generation.validate import Validator
from sortie.missions.rescue.spec import LEVELS, Level


@dataclass(frozen=True, slots=True)
class Block:
    """``count`` episodes of ``level`` drawn from ``seed``, over ``worlds`` in turn."""

    level: Level
    count: int
    seed: int
    worlds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RescuePlan:
    """A suite's name and its blocks; episode ids run ``name/0000`` on across blocks."""

    name: str
    blocks: tuple[Block, ...]

    def settings(self) -> dict[str, dict[str, object]]:
        """Return the header's record of seeds, counts and worlds per level."""
        return {
            "seeds": {b.level.value: b.seed for b in self.blocks},
            "counts": {b.level.value: b.count for b in self.blocks},
            "worlds": {b.level.value: list(b.worlds) for b in self.blocks},
        }

    def jobs(self) -> list[tuple[Block, int, str]]:
        """Return every episode as (block, index in the block, episode id), in file order."""
        return numbered_jobs(self.name, self.blocks)

    def episode(
        self, block: Block, index: int, episode_id: str, validator: Validator | None = None
    ) -> EpisodeSpec:
        """Return one episode (regenerated alone, as the whole suite would make it)."""
        world = block.worlds[index % len(block.worlds)]
        return generate_episode(block.level, world, block.seed, index, episode_id, validator)

    def build(
        self, on_episode: Callable[[EpisodeSpec], None] = lambda e: None
    ) -> tuple[SuiteHeader, list[EpisodeSpec]]:
        """Generate the suite; return its header and episodes."""
        validator = Validator()

        def make(block: Block, index: int, episode_id: str) -> EpisodeSpec:
            return self.episode(block, index, episode_id, validator)

        return build_suite(self, make, (GENERATOR, GENERATOR_VERSION), on_episode)


def _level_suite(level: Level, count: int) -> RescuePlan:
    number = int(level.value[1])
    block = Block(level, count, 1000 * number, LEVELS[level].worlds)
    return RescuePlan(f"rescue-{level.value.lower()}-v2", (block,))


SMOKE_WORLDS = {
    Level.L1: ("flexible_room",),
    Level.L2: ("suburb", "street"),
    Level.L3: ("forest", "campus"),
    Level.L4: ("campus",),
    Level.L5: ("tower", "station"),
}
"""Two episodes per level that between them visit all seven worlds."""
RESCUE_SUITES: dict[str, RescuePlan] = {
    plan.name: plan
    for plan in (
        *(
            _level_suite(level, count)
            for level, count in zip(Level, (25, 59, 59, 39, 31), strict=True)
        ),
        RescuePlan(
            "rescue-smoke-v2",
            tuple(
                Block(level, 2, 9000 + int(level.value[1]), worlds)
                for level, worlds in SMOKE_WORLDS.items()
            ),
        ),
    )
}
