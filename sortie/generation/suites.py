"""The committed suites' plans, every family's: what each suite holds and how to rebuild it.

Each family keeps its suites' plans beside its generator (``rescue_suites``, ``aerial_suites``,
``household_suites``); a plan makes one episode (``episode``) or its whole suite (``build``).
The files in ``sortie/suites/`` are the generators' output, and ``sortie generate suites
--check`` proves that regenerating reproduces them byte for byte. Loading a committed suite is
``sortie.suites.load_suite``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, UnknownNameError, did_you_mean
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.generation.aerial_suites import AERIAL_SUITES, AerialPlan
from sortie.generation.household_suites import HOUSEHOLD_SUITES, HouseholdPlan
from sortie.generation.rescue_suites import RESCUE_SUITES, RescuePlan
from sortie.suites import suite_file, suite_names

SUITE_DIR = Path(__file__).resolve().parent.parent / "suites"
"""Where the committed suite files live in a source checkout."""


Plan = RescuePlan | AerialPlan | HouseholdPlan
"""A committed suite's plan: its jobs, one episode (``episode``), the whole suite (``build``)."""

SUITES: dict[str, Plan] = {**RESCUE_SUITES, **AERIAL_SUITES, **HOUSEHOLD_SUITES}
"""Every committed suite's plan by name, family by family."""


def episode_of(plan: Plan, block: Any, index: int, episode_id: str) -> EpisodeSpec:
    """Return one episode of ``plan`` (regenerated alone, as the whole suite would make it)."""
    return plan.episode(block, index, episode_id)


def build_suite(
    name: str, on_episode: Callable[[EpisodeSpec], None] = lambda e: None
) -> tuple[SuiteHeader, list[EpisodeSpec]]:
    """Generate suite ``name``; return its header and episodes."""
    return suite_plan(name).build(on_episode)


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
