"""The navigator's training episodes, generated apart from the committed evaluation suites.

Training episodes come from ``sortie generate rescue`` (``generate_rescue_suite``) with their
own seeds. Nothing of a committed ``rescue-*-v2`` suite may reach the training data: its
generation seeds are refused before anything is generated, and every training episode is
checked here, in code, against every committed episode (its id and its world's seed) before
the expert plays it and again before any training.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sortie import suites
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.generation.request import GenerateRequest
from sortie.generation.rescue import generate_rescue_suite, parse_level

COMMITTED = re.compile(r"rescue-.*-v2")
"""The committed rescue suites the navigator is evaluated on (never trained on)."""


@dataclass(frozen=True, slots=True)
class HeldOut:
    """What the committed rescue suites hold: generation seeds, episode ids, world seeds."""

    seeds: dict[int, str] = field(default_factory=dict)
    """Generation seed -> the suite (and level) that used it."""
    episodes: dict[str, str] = field(default_factory=dict)
    """Episode id -> its suite."""
    worlds: dict[int, str] = field(default_factory=dict)
    """World seed -> the committed episode built on it."""


def held_out() -> HeldOut:
    """Return the seeds and episodes of every committed ``rescue-*-v2`` suite."""
    out = HeldOut()
    for name in suites.suite_names():
        if not COMMITTED.fullmatch(name):
            continue
        suite = suites.read(name)
        for level, seed in (suite.header.settings.get("seeds") or {}).items():
            out.seeds[int(seed)] = f"{name} ({level})"
        for episode in suite.episodes:
            out.episodes[episode.episode_id] = name
            out.worlds[episode.world.seed] = episode.episode_id
    return out


def check_seeds(seeds: Iterable[int], held: HeldOut) -> None:
    """Refuse generation seeds a committed suite was drawn from.

    Raises:
        ConfigError: one line per seed that is a committed suite's.
    """
    clashes = [f"seed {s} is {held.seeds[s]}'s" for s in seeds if s in held.seeds]
    if clashes:
        raise ConfigError(
            f"training seeds: {'; '.join(clashes)} (a committed evaluation suite); choose "
            "another --seed"
        )


def check_disjoint(episodes: Iterable[EpisodeSpec], held: HeldOut, where: str) -> None:
    """Refuse training episodes that share an id or a world with a committed suite.

    Raises:
        ConfigError: naming every clash (``where``: the training file or data checked).
    """
    clashes = []
    for episode in episodes:
        if episode.episode_id in held.episodes:
            clashes.append(
                f"episode {episode.episode_id} is in {held.episodes[episode.episode_id]}"
            )
        if episode.world.seed in held.worlds:
            clashes.append(
                f"episode {episode.episode_id}: world seed {episode.world.seed} is that of "
                f"{held.worlds[episode.world.seed]}"
            )
    if clashes:
        raise ConfigError(
            f"{where}: training data overlaps the committed evaluation suites: {'; '.join(clashes)}"
        )


def level_seed(seed: int, level: str) -> int:
    """Return the generation seed of ``level``'s training episodes: ``seed`` + the level number."""
    return seed + int(parse_level(level).value[1])


def training_suites(
    folder: Path, levels: Iterable[str], count: int, seed: int, echo: Callable[[str], object]
) -> list[Path]:
    """Return one training suite file per level under ``folder``, generating those missing.

    Raises:
        ConfigError: a seed or an episode of a committed suite (nothing is generated for a
            refused seed; a generated file that clashes is removed).
    """
    held = held_out()
    wanted = {level: level_seed(seed, level) for level in levels}
    check_seeds(wanted.values(), held)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for level, drawn in wanted.items():
        path = folder / f"navigator-train-{level.lower()}-seed{drawn}.jsonl"
        if not path.exists():
            request = GenerateRequest(level=level, count=count, seed=drawn, out=path)
            generate_rescue_suite(request, echo)
        try:
            check_disjoint(suites.read(path).episodes, held, str(path))
        except ConfigError:
            path.unlink()
            raise
        paths.append(path)
    return paths
