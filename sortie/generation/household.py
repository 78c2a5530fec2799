"""Household tasks: ``(attributes, seed, index) -> EpisodeSpec`` in a seeded apartment.

Task ``index`` draws everything from ``numpy.random.default_rng([seed, index, attempt])``:
the apartment's seed, the room the robot starts in, the template's choices. The expert's
plan is the shortest plan over the keypaths from the starting state, each subtask with the
sensor-only skill best suited to it, then ``end``; its length is PLWSR's L_expert. Every kept
task was carried out by the oracle with perfect skills (SR 1, every goal condition met) in a
replay; a candidate that breaks a rule is dropped with its reason and another drawn, up to a
bound, after which generation fails naming the reasons.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import cast

import numpy as np

from sortie.agents.household.oracle import plan_state
from sortie.agents.household.plans import PlanError, shortest_plan
from sortie.agents.oracle import OracleAgent
from sortie.backends.catalog import DEFAULT_BACKEND, build_backend
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose
from sortie.core.records import Outcome, PluginRef
from sortie.generation.household_tasks import TEMPLATES, Draft, mentioned, task_objects
from sortie.generation.rejected import Rejected
from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.house import House
from sortie.missions.household.mission import HouseholdMission, Robot
from sortie.missions.household.records import (
    HouseholdTask,
    KeyStep,
    ObjectRole,
    Split,
    TaskAttribute,
    Verb,
)
from sortie.missions.household.rules import goal_met
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.skills import Profile, Setting, best_skill, offered
from sortie.run.episode import run_episode
from sortie.run.jobs import backend_ref, episode_header
from sortie.sim.household import HouseLayout, house_layout
from sortie.sim.worlds import build_world

GENERATOR = "sortie.generation.household"
GENERATOR_VERSION = "1"
"""Bump when a change to generation changes any task (the suites then get a new version)."""
WORLD = "apartment"
ATTEMPTS = 12
"""Candidates drawn per task before giving up."""
MAX_ROUNDS = 20
LONG = 10
"""Fewest subtasks (``end`` aside) in a long task's expert plan."""
PERFECT_SKILLS = HouseholdSettings(skills=Profile.PERFECT)
"""The oracle's replay judges the task, not the skills' luck."""


@dataclass(frozen=True, slots=True)
class HouseholdValidator:
    """Reads candidate worlds and replays candidate tasks on one reusable embedded backend."""

    backend: Robot

    @classmethod
    def create(cls) -> HouseholdValidator:
        """Create the backend (no sensors: the oracle needs none)."""
        backend = build_backend(DEFAULT_BACKEND, {}, body="manipulator", sensors=())
        return cls(cast(Robot, backend))

    def house(self, spec: EpisodeSpec) -> House:
        """Return the household state of ``spec``'s world at the start."""
        self.backend.reset(spec, 0)
        oracle = self.backend.oracle_view()
        states = oracle.open_states()
        return House.from_objects(oracle.objects(), lambda door: states[door])

    def replay(self, spec: EpisodeSpec) -> None:
        """Replay the oracle with perfect skills; reject unless it succeeds with every goal met."""
        mission = HouseholdMission(self.backend, settings=PERFECT_SKILLS)
        agent = OracleAgent()
        agent.attach(self.backend.oracle_view())
        header = episode_header(spec, PluginRef(name="oracle"), backend_ref(spec.family))
        footer = run_episode(mission, agent, header)
        if footer.outcome is not Outcome.SUCCESS:
            problem = next((r.feedback for r in mission.rounds if r.failed), footer.failure_reason)
            raise Rejected(f"the oracle did not carry it out: {problem}")
        facts = HouseholdFacts.model_validate(footer.facts)
        unmet = [g for g in mission.task.goals if not goal_met(g, facts)]
        if unmet:
            raise Rejected(
                f"goal not met by the oracle: {unmet[0].relation.value} {unmet[0].object}"
            )


def generate_task(
    kind: str,
    seed: int,
    index: int,
    episode_id: str,
    split: Split = Split.TRAIN,
    validator: HouseholdValidator | None = None,
) -> EpisodeSpec:
    """Return task ``index`` of template ``kind`` drawn from ``seed``, validated by replay."""
    if kind not in TEMPLATES:
        raise ConfigError(f"household task kind {kind!r} is not one of: {', '.join(TEMPLATES)}")
    validator = validator or HouseholdValidator.create()
    reasons: Counter[str] = Counter()
    for attempt in range(ATTEMPTS):
        rng = np.random.default_rng([seed, index, attempt])
        try:
            return _candidate(kind, rng, episode_id, split, validator)
        except Rejected as rejected:
            reasons[str(rejected)] += 1
    listed = "; ".join(f"{reason} ({n})" for reason, n in reasons.most_common(5))
    raise ConfigError(f"household task {episode_id} ({kind}): no candidate passed: {listed}")


def _candidate(
    kind: str,
    rng: np.random.Generator,
    episode_id: str,
    split: Split,
    validator: HouseholdValidator,
) -> EpisodeSpec:
    world = WorldSpec(builder=WORLD, seed=int(rng.integers(2**31)))
    start = _start(house_layout(build_world(world.builder, world.seed)), rng)
    bare = EpisodeSpec(
        episode_id=episode_id, family="household", level=kind, world=world, start=start
    )
    house = validator.house(bare)
    draft = TEMPLATES[kind](house, rng)
    expert = _expert(house, draft)
    _check_length(kind, draft, expert)
    named = [*mentioned(draft), *(s.target for s in expert if s.target)]
    task = HouseholdTask(
        instruction=draft.instruction,
        attributes=draft.attributes,
        split=split,
        objects=task_objects(house, list(dict.fromkeys(named))),
        keypaths=draft.keypaths,
        goals=draft.goals,
        expert=expert,
        max_rounds=MAX_ROUNDS,
    )
    spec = bare.model_copy(
        update={"start": start, "mission": task.model_dump(mode="json", exclude_none=True)}
    )
    spec = EpisodeSpec.model_validate(spec.model_dump(mode="json"))
    validator.replay(spec)
    return spec


def _start(layout: HouseLayout, rng: np.random.Generator) -> Pose:
    """Return a start at the standing point of a random room, facing a random way."""
    room = layout.rooms[int(rng.integers(len(layout.rooms)))]
    x, y, _ = room.approach
    yaw = float(rng.choice([0.0, 90.0, 180.0, -90.0]))
    return Pose(round(x, 3), round(y, 3), 0.0, yaw)


def _expert(house: House, draft: Draft) -> list[KeyStep]:
    try:
        steps = shortest_plan(plan_state(house), draft.keypaths)
    except PlanError as error:
        raise Rejected(str(error)) from None
    skills = offered(Setting.SENSOR_ONLY)
    named = []
    for step in steps:
        large = house.things[step.target].role is not ObjectRole.ITEM or step.action is Verb.PUT
        named.append(step.model_copy(update={"skill": best_skill(step.action, large, skills).name}))
    return [*named, KeyStep(action=Verb.END)]


def _check_length(kind: str, draft: Draft, expert: list[KeyStep]) -> None:
    subtasks = len(expert) - 1
    if subtasks > MAX_ROUNDS - 2:
        raise Rejected(f"the expert needs {subtasks} subtasks, too many for {MAX_ROUNDS} rounds")
    if TaskAttribute.LONG in draft.attributes and subtasks < LONG:
        raise Rejected(f"a long task needs {LONG}+ subtasks; the expert needs {subtasks}")
    if TaskAttribute.SHORT in draft.attributes and subtasks >= LONG:
        raise Rejected(f"a short task needs under {LONG} subtasks; the expert needs {subtasks}")
