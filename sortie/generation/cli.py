"""``sortie generate``: a family's episodes on demand (its ``Family.generator``), the suites."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.generation import aerial
from sortie.generation.rescue import GENERATOR, GENERATOR_VERSION, generate_rescue, parse_level
from sortie.generation.suites import SUITE_DIR, SUITES, check_suites, write_suites
from sortie.missions.registry import FAMILIES
from sortie.missions.rescue.spec import LEVELS

SUITES_TARGET = "suites"


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    """What ``sortie generate FAMILY`` asks of the family's generator (each reads its own)."""

    level: str | None = None
    """A level (rescue)."""
    types: str | None = None
    """Mission types (aerial) or task templates (household)."""
    world: str | None = None
    count: int = 10
    seed: int = 0
    out: Path | None = None


def generate_command(
    what: str,
    *,
    level: str | None = None,
    world: str | None = None,
    count: int = 10,
    seed: int = 0,
    out: Path | None = None,
    check: bool = False,
    types: str | None = None,
    echo: Callable[[str], object] = print,
) -> bool:
    """Run ``sortie generate WHAT``; return False if ``--check`` found a suite that differs.

    ``rescue`` writes ``count`` episodes of ``level`` (in ``world``, or the level's worlds
    in turn) to ``out``; ``aerial`` writes ``count`` missions of ``types`` (e.g. ``patrol``
    or ``reporting+inspection``) in ``world``, or the five flight worlds in turn;
    ``household`` writes ``count`` tasks of template ``types`` (e.g. ``long`` or
    ``logical+human_style``), each in its own seeded apartment; ``suites``
    rebuilds every committed suite, or with ``check`` regenerates them elsewhere and
    compares byte for byte.
    """
    if what == SUITES_TARGET:
        return _suites(check, echo)
    if what not in FAMILIES:
        targets = ", ".join([*FAMILIES.in_order(), SUITES_TARGET])
        raise ConfigError(f"generate: unknown target {what!r}; allowed: {targets}")
    family = FAMILIES.get(what)
    generator = family.load_generator()
    if generator is None:
        raise ConfigError(f"generate: the {what} family has no generator")
    generator(GenerateRequest(level, types, world, count, seed, out), echo)
    return True


def generate_rescue_suite(request: GenerateRequest, echo: Callable[[str], object]) -> None:
    """Write ``count`` rescue episodes of one level (in ``world``, or the level's in turn)."""
    if request.level is None:
        raise ConfigError("generate rescue: --level is required (L1..L5)")
    parsed = parse_level(request.level)
    worlds = (request.world,) if request.world else LEVELS[parsed].worlds
    path = request.out or Path(f"rescue-{parsed.value.lower()}-seed{request.seed}.jsonl")
    started = time.perf_counter()
    episodes = generate_rescue(parsed, worlds, request.count, request.seed, path.stem)
    settings = _settings(parsed.value, worlds, request)
    _write(path, (GENERATOR, GENERATOR_VERSION), settings, episodes)
    echo(f"{path}: {len(episodes)} episodes in {time.perf_counter() - started:.1f} s")


def generate_aerial_suite(request: GenerateRequest, echo: Callable[[str], object]) -> None:
    """Write ``count`` aerial missions of ``types`` (in ``world``, or the flight worlds)."""
    if request.types is None:
        raise ConfigError(f"generate aerial: --type is required ({', '.join(aerial.COMBINATIONS)})")
    tags = "+".join(t.value for t in aerial.parse_types(request.types))
    worlds = (request.world,) if request.world else tuple(aerial.FLIGHT_WORLDS)
    for name in worlds:
        aerial.check_world(name)
    path = request.out or Path(f"aerial-{tags.replace('+', '-')}-seed{request.seed}.jsonl")
    started = time.perf_counter()
    missions = aerial.generate_aerial(tags, worlds, request.count, request.seed, path.stem)
    made_by = (aerial.GENERATOR, aerial.GENERATOR_VERSION)
    _write(path, made_by, _settings(tags, worlds, request), missions)
    echo(f"{path}: {len(missions)} missions in {time.perf_counter() - started:.1f} s")


def _settings(key: str, worlds: Sequence[str], request: GenerateRequest) -> dict[str, Any]:
    """Return a generated suite's settings: its seed, count and worlds, under ``key``."""
    return {
        "seeds": {key: request.seed},
        "counts": {key: request.count},
        "worlds": {key: list(worlds)},
    }


def _write(
    path: Path, made_by: tuple[str, str], settings: dict[str, Any], episodes: list[EpisodeSpec]
) -> None:
    """Write a generated suite: ``made_by`` is its generator and version."""
    header = SuiteHeader(
        suite=path.stem, generator=made_by[0], generator_version=made_by[1], settings=settings
    )
    write_suite(path, header, episodes)


def generate_household_suite(request: GenerateRequest, echo: Callable[[str], object]) -> None:
    """Write ``count`` household tasks of template ``types``, each in its own apartment."""
    from sortie.generation.household_suites import HouseholdPlan
    from sortie.generation.household_tasks import TEMPLATES

    kind, count, seed, out = request.types, request.count, request.seed, request.out
    if kind not in TEMPLATES:
        given = "is required" if kind is None else f"{kind!r} is not a template"
        raise ConfigError(f"generate household: --type {given}; allowed: {', '.join(TEMPLATES)}")
    path = out or Path(f"household-{kind.replace('+', '-')}-seed{seed}.jsonl")
    started = time.perf_counter()
    header, tasks = HouseholdPlan(path.stem, seed, (kind,) * count).build()
    write_suite(path, header, tasks)
    echo(f"{path}: {len(tasks)} tasks in {time.perf_counter() - started:.1f} s")


def _suites(check: bool, echo: Callable[[str], object]) -> bool:
    started = time.perf_counter()
    if not check:
        for path in write_suites(SUITE_DIR):
            echo(f"wrote {path}")
        echo(f"{len(SUITES)} suites in {time.perf_counter() - started:.1f} s")
        return True
    with tempfile.TemporaryDirectory() as folder:
        differ = check_suites(Path(folder))
    elapsed = time.perf_counter() - started
    if differ:
        echo(f"differ from the committed files: {', '.join(differ)} ({elapsed:.1f} s)")
        return False
    echo(f"all {len(SUITES)} suites regenerate byte for byte ({elapsed:.1f} s)")
    return True
