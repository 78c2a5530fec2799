"""The executor's low-level skills: what each is for, and a seeded model of how often it works.

Five skills with EMMOE's roles (docs/household.md, Rules: skills). Each declares the verbs it
is made for and how well it does them on small things (items) and large ones (furniture,
rooms). A skill asked for a verb outside its role still tries, at a quarter of its rate, so a
planner's choice of skill matters. The ``perfect`` profile sets every rate a role covers to 1
(a mismatch still fails three times in four), to test a planner alone.

Whether an attempt works is drawn from a generator seeded by (episode seed, round, attempt):
the same episode gives the same outcomes on any worker, whatever happened in other episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from sortie.missions.household.records import HouseholdTask, Verb

MISMATCH = 0.25
"""Factor on a skill's rate when asked for a verb its role does not cover."""


class Setting(StrEnum):
    """What the skills may know (docs/household.md, Rules: settings)."""

    PRIVILEGED = "privileged"
    """Skills read object poses from the scene."""
    SENSOR_ONLY = "sensor-only"
    """Skills may only go to or act on what the robot has seen."""


class Profile(StrEnum):
    """How reliable the skills are."""

    DEFAULT = "default"
    PERFECT = "perfect"


@dataclass(frozen=True, slots=True)
class Skill:
    """A low-level skill: its role, the verbs it is for, and its success rates.

    ``small`` is the rate on items, ``large`` on furniture and rooms.
    """

    name: str
    role: str
    verbs: frozenset[Verb]
    small: float
    large: float
    privileged: bool = False
    """Needs object poses from the scene: offered only in the privileged setting."""

    def rate(self, verb: Verb, large: bool, profile: Profile) -> float:
        """Return the chance that one attempt at ``verb`` on a small or large thing works."""
        base = self.large if large else self.small
        if profile is Profile.PERFECT:
            base = 1.0 if base > 0 else 0.0
        return base if verb in self.verbs else base * MISMATCH


_NAV = frozenset({Verb.GO_TO})
SKILLS: tuple[Skill, ...] = (
    Skill("image_nav", "image-goal navigation: points, rooms and large things", _NAV, 0.55, 0.9),
    Skill("object_nav", "object navigation: things a detector can find", _NAV, 0.9, 0.7),
    Skill("grasp", "grasping: pick up and put down", frozenset({Verb.PICK, Verb.PUT}), 0.85, 0.8),
    Skill(
        "articulate",
        "articulation: open and close doors of containers",
        frozenset({Verb.OPEN, Verb.CLOSE}),
        0.8,
        0.85,
    ),
    Skill(
        "all_in_one",
        "privileged all-in-one skill: every verb, from the scene's object poses",
        frozenset(Verb) - {Verb.END},
        0.85,
        0.9,
        privileged=True,
    ),
)
"""Every skill, in the order planners are offered them."""


def offered(setting: Setting) -> tuple[Skill, ...]:
    """Return the skills offered in ``setting`` (the all-in-one skill needs privileged poses)."""
    return tuple(s for s in SKILLS if setting is Setting.PRIVILEGED or not s.privileged)


def best_skill(verb: Verb, large: bool, skills: tuple[Skill, ...]) -> Skill:
    """Return the offered skill most likely to carry out ``verb`` (first on a tie)."""
    return max(skills, key=lambda s: s.rate(verb, large, Profile.DEFAULT))


def attempt_works(seed: int, round_: int, attempt: int, rate: float) -> tuple[bool, float]:
    """Return whether one attempt works, and a uniform draw in [0, 1) for how far it got."""
    rng = np.random.default_rng([seed, round_, attempt])
    works, how_far = rng.random(2)
    return bool(works < rate), float(how_far)


def expert_skill_problems(task: HouseholdTask, skills: Sequence[Skill] = SKILLS) -> list[str]:
    """Return the expert's steps whose skill is not among ``skills`` or not made for the verb."""
    by_name = {s.name: s for s in skills}
    problems = []
    for j, step in enumerate(task.expert):
        if step.skill is None or step.action is Verb.END:
            continue
        skill = by_name.get(step.skill)
        if skill is None:
            problems.append(
                f"expert.{j}.skill: {step.skill!r} is not an offered skill "
                f"(offered: {', '.join(by_name)})"
            )
        elif step.action not in skill.verbs:
            verbs = ", ".join(sorted(v.value for v in skill.verbs))
            problems.append(
                f"expert.{j}.skill: {step.skill!r} is not made for {step.action.value} "
                f"(it does: {verbs})"
            )
    return problems
