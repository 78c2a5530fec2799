"""The committed suites' plans: what each holds and how to rebuild it.

Each suite is a list of blocks (a level, a count, a seed and the worlds taken in turn); the
files in ``sortie/suites/`` are the generator's output and ``sortie generate suites --check``
proves that regenerating reproduces them byte for byte. Counts follow RescueBench's test
split: 25 / 59 / 59 / 39 / 31 episodes for L1..L5 (213 in all). The aerial suites' plans live
in ``sortie.generation.aerial_suites``, the household ones in
``sortie.generation.household_suites``; ``SUITES`` holds them all. Loading a committed suite is
``sortie.suites.load_suite``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, UnknownNameError, did_you_mean
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.generation.aerial_suites import AERIAL_SUITES, AerialBlock, AerialPlan
from sortie.generation.household_suites import HOUSEHOLD_SUITES, HouseholdPlan
from sortie.generation.plans import numbered_jobs
from sortie.generation.rescue import GENERATOR, GENERATOR_VERSION, generate_episode
from sortie.generation.validate import Validator
from sortie.missions.rescue.spec import LEVELS, Level
from sortie.suites import suite_file, suite_names

SUITE_DIR = Path(__file__).resolve().parent.parent / "suites"
"""Where the committed suite files live in a source checkout."""


@dataclass(frozen=True, slots=True)
class Block:
    """``count`` episodes of ``level`` drawn from ``seed``, over ``worlds`` in turn."""

    level: Level
    count: int
    seed: int
    worlds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SuitePlan:
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


def _level_suite(level: Level, count: int) -> SuitePlan:
    number = int(level.value[1])
    block = Block(level, count, 1000 * number, LEVELS[level].worlds)
    return SuitePlan(f"rescue-{level.value.lower()}-v2", (block,))


SMOKE_WORLDS = {
    Level.L1: ("flexible_room",),
    Level.L2: ("suburb", "street"),
    Level.L3: ("forest", "campus"),
    Level.L4: ("campus",),
    Level.L5: ("tower", "station"),
}
"""Two episodes per level that between them visit all seven worlds."""
Plan = SuitePlan | AerialPlan | HouseholdPlan
SUITES: dict[str, Plan] = {
    **{
        plan.name: plan
        for plan in (
            *(
                _level_suite(level, count)
                for level, count in zip(Level, (25, 59, 59, 39, 31), strict=True)
            ),
            SuitePlan(
                "rescue-smoke-v2",
                tuple(
                    Block(level, 2, 9000 + int(level.value[1]), worlds)
                    for level, worlds in SMOKE_WORLDS.items()
                ),
            ),
        )
    },
    **AERIAL_SUITES,
    **HOUSEHOLD_SUITES,
}


def episode_of(
    plan: Plan,
    block: Block | AerialBlock | str,
    index: int,
    episode_id: str,
    validator: Validator | None = None,
) -> EpisodeSpec:
    """Return one episode of ``plan`` (regenerated alone, as the whole suite would make it)."""
    if isinstance(plan, AerialPlan) and isinstance(block, AerialBlock):
        return plan.episode(block, index, episode_id)
    if isinstance(plan, HouseholdPlan) and isinstance(block, str):
        return plan.episode(block, index, episode_id)
    assert isinstance(block, Block)
    world = block.worlds[index % len(block.worlds)]
    return generate_episode(block.level, world, block.seed, index, episode_id, validator)


def build_suite(
    name: str, on_episode: Callable[[EpisodeSpec], None] = lambda e: None
) -> tuple[SuiteHeader, list[EpisodeSpec]]:
    """Generate suite ``name``; return its header and episodes."""
    plan = suite_plan(name)
    if isinstance(plan, AerialPlan | HouseholdPlan):
        return plan.build(on_episode)
    validator = Validator()
    episodes = []
    for block, index, episode_id in plan.jobs():
        episodes.append(episode_of(plan, block, index, episode_id, validator))
        on_episode(episodes[-1])
    header = SuiteHeader(
        suite=plan.name,
        generator=GENERATOR,
        generator_version=GENERATOR_VERSION,
        settings=plan.settings(),
    )
    return header, episodes


def write_suites(
    folder: Path = SUITE_DIR,
    names: list[str] | None = None,
    on_episode: Callable[[EpisodeSpec], None] = lambda e: None,
) -> list[Path]:
    """Regenerate suites ``names`` (default: all) into ``folder``; return the files."""
    paths = []
    for name in names or list(SUITES):
        header, episodes = build_suite(name, on_episode)
        paths.append(folder / f"{name}.jsonl")
        write_suite(paths[-1], header, episodes)
    return paths


def check_suites(
    folder: Path,
    names: list[str] | None = None,
    on_episode: Callable[[EpisodeSpec], None] = lambda e: None,
) -> list[str]:
    """Regenerate suites into ``folder`` and return the names whose files differ from theirs."""
    differ = []
    for name in names or list(SUITES):
        fresh = write_suites(folder, [name], on_episode)[0]
        if fresh.read_bytes() != committed_bytes(name):
            differ.append(name)
    return differ


def suite_plan(name: str) -> Plan:
    """Return the plan of suite ``name``, or raise naming the suites."""
    if name not in SUITES:
        hint = did_you_mean(name, SUITES)
        raise UnknownNameError(f"Unknown suite {name!r}.{hint} Available: {', '.join(SUITES)}")
    return SUITES[name]


def committed_bytes(name: str) -> bytes:
    """Return the bytes of committed suite ``name`` as installed with the package."""
    suite_plan(name)
    if name not in suite_names():
        raise ConfigError(
            f"suite {name!r} is planned but not packaged; build its file with "
            f"`sortie generate suites`"
        )
    return suite_file(name).read_bytes()
