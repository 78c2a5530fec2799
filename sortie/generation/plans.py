"""What every suite plan shares: episode ids numbered on across its blocks, and its build."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import SuiteHeader


class Counted(Protocol):
    """A block of a suite plan: some number of episodes drawn alike."""

    @property
    def count(self) -> int:
        """Episodes in the block."""
        ...


B = TypeVar("B", bound=Counted)


def numbered_jobs(name: str, blocks: Sequence[B]) -> list[tuple[B, int, str]]:
    """Return every episode as (block, index in the block, ``name/0000`` id), in file order."""
    jobs, number = [], 0
    for block in blocks:
        for index in range(block.count):
            jobs.append((block, index, f"{name}/{number:04d}"))
            number += 1
    return jobs


J = TypeVar("J")


def generate_jobs(
    jobs: Sequence[tuple[J, int, str]],
    make: Callable[[J, int, str], EpisodeSpec],
    on_episode: Callable[[EpisodeSpec], None] = lambda e: None,
) -> list[EpisodeSpec]:
    """Return ``make(block, index, episode_id)`` for every job, telling ``on_episode`` of each."""
    episodes = []
    for block, index, episode_id in jobs:
        episodes.append(make(block, index, episode_id))
        on_episode(episodes[-1])
    return episodes


J_co = TypeVar("J_co", covariant=True)


class Plan(Protocol[J_co]):
    """A suite plan: its name, its jobs in file order and the settings its header records."""

    @property
    def name(self) -> str:
        """The suite's name."""
        ...

    def jobs(self) -> Sequence[tuple[J_co, int, str]]:
        """Return every episode as (block, index in the block, episode id)."""
        ...

    def settings(self) -> dict[str, Any]:
        """Return what the suite's header records of how it was made."""
        ...


def build_suite(
    plan: Plan[J],
    make: Callable[[J, int, str], EpisodeSpec],
    generator: tuple[str, str],
    on_episode: Callable[[EpisodeSpec], None] = lambda e: None,
) -> tuple[SuiteHeader, list[EpisodeSpec]]:
    """Return the header and episodes of ``plan``, each made by ``make``.

    ``generator`` is the generating module's name and version, as the header records them.
    """
    episodes = generate_jobs(plan.jobs(), make, on_episode)
    name, version = generator
    header = SuiteHeader(
        suite=plan.name, generator=name, generator_version=version, settings=plan.settings()
    )
    return header, episodes
