"""The committed household suites: EMMOE-100's shape on sortie's apartments.

``household-v1`` holds 100 tasks numbered 1–100, tasks 1–90 the train split and 91–100 the
test split, as EMMOE-100 does. Its mix of templates gives 20 short, 50 long, about 15
open-ended, 20 logical and 43 human-style tasks (a task may carry several attributes), in an
order drawn once from the suite's seed so both splits mix them. ``household-test-v1`` is
tasks 91–100, the same tasks with the same ids. ``household-smoke-v1`` has one task of each
template and a second long one (8): every attribute in a few minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.generation.household import (
    GENERATOR,
    GENERATOR_VERSION,
    HouseholdValidator,
    generate_task,
)
from sortie.generation.household_tasks import TEMPLATES
from sortie.generation.plans import build_suite
from sortie.generation.request import Echo, GenerateRequest
from sortie.missions.household.records import Split

MIX = {
    "short": 12,
    "short+human_style": 8,
    "long": 25,
    "long+human_style": 25,
    "open_ended": 10,
    "logical": 10,
    "logical+human_style": 10,
}
"""Tasks of each template in ``household-v1`` (100 in all)."""
TRAIN = 90
"""Tasks 1..TRAIN are the train split, the rest the test split."""


def schedule(seed: int) -> tuple[str, ...]:
    """Return the template of each of ``household-v1``'s tasks, in task order."""
    kinds = [kind for kind, count in MIX.items() for _ in range(count)]
    order = np.random.default_rng(seed).permutation(len(kinds))
    return tuple(kinds[int(i)] for i in order)


@dataclass(frozen=True, slots=True)
class HouseholdPlan:
    """A household suite: which numbered tasks of which template it holds, drawn from ``seed``."""

    name: str
    seed: int
    kinds: tuple[str, ...]
    """The template of task ``first``, ``first + 1``, ..."""
    first: int = 1
    ids: str = ""
    """The suite whose ids the tasks carry (default: this one)."""
    train: int = TRAIN

    def settings(self) -> dict[str, object]:
        """Return the header's record of the seed, the tasks and their templates."""
        last = self.first + len(self.kinds) - 1
        return {
            "seed": self.seed,
            "tasks": [self.first, last],
            "train": self.train,
            "kinds": list(self.kinds),
        }

    def jobs(self) -> list[tuple[str, int, str]]:
        """Return every task as (template, number, episode id), in file order."""
        prefix = self.ids or self.name
        return [
            (kind, number, f"{prefix}/{number:04d}")
            for number, kind in enumerate(self.kinds, start=self.first)
        ]

    def episode(
        self, kind: str, number: int, episode_id: str, validator: HouseholdValidator | None = None
    ) -> EpisodeSpec:
        """Return one task (regenerated alone, as the whole suite would make it)."""
        split = Split.TRAIN if number <= self.train else Split.TEST
        return generate_task(kind, self.seed, number, episode_id, split, validator)

    def build(
        self, on_episode: Callable[[EpisodeSpec], None] = lambda e: None
    ) -> tuple[SuiteHeader, list[EpisodeSpec]]:
        """Generate the suite; return its header and tasks."""
        validator = HouseholdValidator.create()

        def make(block: str, index: int, episode_id: str) -> EpisodeSpec:
            return self.episode(block, index, episode_id, validator)

        return build_suite(self, make, (GENERATOR, GENERATOR_VERSION), on_episode)


SEED = 2000
_ALL = schedule(SEED)
HOUSEHOLD_SUITES: dict[str, HouseholdPlan] = {
    plan.name: plan
    for plan in (
        HouseholdPlan("household-v1", SEED, _ALL),
        HouseholdPlan("household-test-v1", SEED, _ALL[TRAIN:], first=TRAIN + 1, ids="household-v1"),
        HouseholdPlan("household-smoke-v1", 9200, (*TEMPLATES, "long")),
    )
}
"""The household suites by name (``sortie.generation.suites.SUITES`` includes them)."""


def generate_household_suite(request: GenerateRequest, echo: Echo) -> None:
    """Write ``count`` household tasks of template ``types``, each in its own apartment."""
    kind, count, seed, out = request.types, request.count, request.seed, request.out
    if kind not in TEMPLATES:
        given = "is required" if kind is None else f"{kind!r} is not a template"
        raise ConfigError(f"generate household: --type {given}; allowed: {', '.join(TEMPLATES)}")
    path = out or Path(f"household-{kind.replace('+', '-')}-seed{seed}.jsonl")
    started = time.perf_counter()
    header, tasks = HouseholdPlan(path.stem, seed, (kind,) * count).build()
    write_suite(path, header, tasks)
    echo(f"{path}: {len(tasks)} tasks in {time.perf_counter() - started:.1f} s")
