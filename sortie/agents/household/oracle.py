"""The household oracle: plans from the scene and the task's keypaths, re-plans after failures.

Privileged: it reads the task (its keypaths) and the scene's starting state from the oracle
view, then follows the state through the executor's answers. Each round it plans every
keypath from where it stands, takes the shortest plan, and names its first subtask with the
offered skill most likely to do it; with no step left it says ``end``.
"""

from __future__ import annotations

from sortie.agents.baselines import OracleOptions
from sortie.agents.household.plans import PlanError, PlanState, shortest_plan
from sortie.backends.base import OracleView
from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation
from sortie.missions.household.house import House
from sortie.missions.household.observation import HouseholdObservation
from sortie.missions.household.records import HouseholdTask, ObjectRole, Verb
from sortie.missions.household.rules import matched
from sortie.missions.household.skills import SKILLS, Skill, best_skill
from sortie.missions.household.vocabulary import Subtask


def plan_state(house: House) -> PlanState:
    """Return the planning state of a house as it stands."""
    places = {name: (p.relation, p.place) for name, p in house.places.items()}
    roles = {name: t.role for name, t in house.things.items()}
    return PlanState(roles, places, dict(house.open), house.held)


class HouseholdOracle:
    """Carries out the task's shortest keypath, following the executor's feedback."""

    def __init__(
        self, oracle: OracleView, brief: Brief, options: OracleOptions | None = None
    ) -> None:
        """Read the task and the starting state from the privileged view (no options used)."""
        self.task = HouseholdTask.model_validate(oracle.mission())
        states = oracle.open_states()
        house = House.from_objects(oracle.objects(), lambda door: states[door])
        self.state = plan_state(house)
        offered = {name for name, _ in brief.skills}
        self.skills = tuple(s for s in SKILLS if s.name in offered)
        self._seen_rounds = 0

    def act(self, observation: MissionObservation) -> Action:
        """Return the next subtask of the shortest plan, or ``end`` when nothing is left."""
        step = self.plan(observation)
        return step if step is not None else Subtask(Verb.END.value, "", "")

    def plan(self, observation: MissionObservation) -> Subtask | None:
        """Return the next subtask from where things stand (``end`` when nothing is left).

        None when no plan reaches the goal from here (another planner led the way, e.g. it
        holds an item the remaining keypaths cannot use): the label an expert cannot give.
        """
        history = observation.history if isinstance(observation, HouseholdObservation) else ()
        for record in history[self._seen_rounds :]:
            self.state = self.state.observe(record)
        self._seen_rounds = len(history)
        remaining = [
            keypath[matched(keypath, history, self.task) :] for keypath in self.task.keypaths
        ]
        try:
            steps = shortest_plan(self.state, remaining)
        except PlanError:
            return None
        if not steps:
            return Subtask(Verb.END.value, "", "")
        step = steps[0]
        return Subtask(
            step.action.value, step.target, self._skill(step.action, step.target).name, step.place
        )

    def _skill(self, verb: Verb, target: str) -> Skill:
        large = self.state.roles[target] is not ObjectRole.ITEM or verb is Verb.PUT
        return best_skill(verb, large, self.skills)
