"""What every suite plan shares: episode ids numbered on across its blocks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from sortie.core.episode import EpisodeSpec


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
