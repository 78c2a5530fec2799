"""The world check of a household task: objects, kinds, keypaths, the expert's plan and skills."""

from __future__ import annotations

import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose
from sortie.missions.household.facts import PlaceFacts
from sortie.missions.household.fit import task_problems
from sortie.missions.household.house import House, Thing
from sortie.missions.household.mission import HouseholdMission
from sortie.missions.household.records import HouseholdTask, ObjectRole
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.spec import household_task
from tests.missions.household.conftest import PUT_MUG
from tests.missions.household.kitchen import OBJECTS, episode, expert

GO_FRIDGE = {"action": "go_to", "target": "fridge_0"}
OPEN_FRIDGE = {"action": "open", "target": "fridge_0"}
PICK_MUG_1 = {"action": "pick", "target": "mug_1"}


def kitchen_house() -> House:
    """Return the test kitchen's starting state (the fridge closed, mug_1 in it)."""

    def thing(name: str, kind: str, role: ObjectRole, x: float, y: float, **more: object) -> Thing:
        return Thing(name, kind, role, "kitchen_0", (x, y, 0.0), **more)  # type: ignore[arg-type]

    things = [
        thing("kitchen_0", "kitchen", ObjectRole.ROOM, 0.0, 0.0, approach=Pose(0, 0, 0, 0)),
        thing("counter_0", "counter", ObjectRole.RECEPTACLE, 3.5, 0, approach=Pose(2.6, 0, 0, 0)),
        thing("table_0", "table", ObjectRole.RECEPTACLE, 0, -2.4, approach=Pose(0, -1.4, 0, -90)),
        thing(
            "fridge_0",
            "fridge",
            ObjectRole.CONTAINER,
            -3.6,
            2.0,
            approach=Pose(-2.5, 2.0, 0, 180),
            door="fridge_0_door",
        ),
        thing("apple_0", "apple", ObjectRole.ITEM, 3.5, -0.5),
        thing("mug_0", "mug", ObjectRole.ITEM, 3.5, 0.5),
        thing("mug_1", "mug", ObjectRole.ITEM, -3.6, 2.0),
    ]
    places = {
        "apple_0": PlaceFacts(relation="on", place="counter_0"),
        "mug_0": PlaceFacts(relation="on", place="counter_0"),
        "mug_1": PlaceFacts(relation="inside", place="fridge_0"),
    }
    house = House(things, places)
    house.open = {"fridge_0": False}
    return house


START = Pose(0.0, 0.0, 0.0, 0.0)


def task(
    keypaths: list[list[dict]], plan: list[dict] | None = None, objects: dict | None = None
) -> HouseholdTask:
    """Return a kitchen task; the expert's plan is ``plan`` or planned from the first keypath."""
    return HouseholdTask.model_validate(
        {
            "instruction": "Tidy up.",
            "attributes": ["short"],
            "objects": objects or OBJECTS,
            "keypaths": keypaths,
            "expert": plan or expert(keypaths[0]),
        }
    )


def test_a_planned_task_fits_its_world() -> None:
    """The mug task with the expert's plan from the kitchen's start has no problem."""
    assert task_problems(task([PUT_MUG]), kitchen_house(), START) == []


def test_a_kind_other_than_the_worlds_is_refused() -> None:
    """mug_1 declared a table (but an item): the problem names the object and both kinds."""
    objects = {**OBJECTS, "mug_1": {"kind": "table", "role": "item"}}
    problems = task_problems(task([PUT_MUG], objects=objects), kitchen_house(), START)
    assert problems == ["objects.mug_1: 'mug_1' is of kind mug in the world, the task says table"]


def test_a_kind_named_by_a_synonym_fits() -> None:
    """A fridge the task calls a refrigerator is the same kind."""
    objects = {**OBJECTS, "fridge_0": {"kind": "refrigerator", "role": "container"}}
    assert task_problems(task([PUT_MUG], objects=objects), kitchen_house(), START) == []


def test_a_keypath_closing_a_closed_container_is_refused() -> None:
    """The fridge starts closed: a keypath step closing it can never be done as written."""
    keypaths = [PUT_MUG, [{"action": "close", "target": "fridge_0"}]]
    problems = task_problems(task(keypaths), kitchen_house(), START)
    assert problems == ["keypaths.1.0 (close fridge_0): fridge_0 is already closed"]


def test_a_keypath_picking_with_a_full_hand_is_refused() -> None:
    """Two picks in a row: the second finds the hand holding the first item."""
    picks = [{"action": "pick", "target": "mug_0"}, {"action": "pick", "target": "apple_0"}]
    problems = task_problems(task([PUT_MUG, picks]), kitchen_house(), START)
    assert problems == ["keypaths.1.1 (pick apple_0): the hand already holds mug_0"]


def test_an_expert_taking_from_a_closed_container_is_refused() -> None:
    """The expert picks mug_1 from the fridge it never opened."""
    plan = [GO_FRIDGE, PICK_MUG_1, {"action": "end"}]
    problems = task_problems(task([PUT_MUG], plan), kitchen_house(), START)
    assert problems == ["expert.1 (pick mug_1): fridge_0 is closed (open it first)"]


def test_an_expert_acting_on_what_it_never_went_to_is_refused() -> None:
    """The expert opens the fridge from where it starts, 4.1 m away: out of reach (D1)."""
    plan = [OPEN_FRIDGE, {"action": "end"}]
    problems = task_problems(task([PUT_MUG], plan), kitchen_house(), START)
    assert problems == [
        "expert.0 (open fridge_0): fridge_0 is out of reach: 4.1 m from the robot where it "
        "starts, the reach is 2 m (go to it first)"
    ]


def test_an_expert_picking_far_from_where_it_went_is_refused() -> None:
    """The expert goes to the table, then picks the counter's mug 4.0 m away."""
    plan = [
        {"action": "go_to", "target": "table_0"},
        {"action": "pick", "target": "mug_0"},
        {"action": "end"},
    ]
    problems = task_problems(task([PUT_MUG], plan), kitchen_house(), START)
    assert problems == [
        "expert.1 (pick mug_0): mug_0 is out of reach: 4.0 m from the robot at table_0, "
        "the reach is 2 m (go to it first)"
    ]


def test_an_expert_opening_with_a_full_hand_is_refused() -> None:
    """Pick the counter's mug, then open the fridge while holding it: the executor's L1."""
    plan = [
        {"action": "go_to", "target": "counter_0"},
        {"action": "pick", "target": "mug_0"},
        GO_FRIDGE,
        OPEN_FRIDGE,
        {"action": "end"},
    ]
    problems = task_problems(task([PUT_MUG], plan), kitchen_house(), START)
    assert problems == ["expert.3 (open fridge_0): the hand holds mug_0 (put it down first)"]


def test_an_expert_skill_not_made_for_its_verb_is_refused_at_load() -> None:
    """An expert step picking with a navigation skill fails the task's check, naming the step."""
    spec = episode([PUT_MUG])
    mission = dict(spec.mission)
    mission["expert"] = [{**GO_FRIDGE, "skill": "grasp"}, {"action": "end"}]
    with pytest.raises(ConfigError, match=r"test/kitchen: mission\.expert\.0\.skill: 'grasp'"):
        household_task(spec.model_copy(update={"mission": mission}))


def test_an_unknown_expert_skill_is_refused_at_load() -> None:
    """An expert step naming a skill sortie does not have fails the task's check."""
    spec = episode([PUT_MUG])
    mission = dict(spec.mission)
    mission["expert"] = [{**GO_FRIDGE, "skill": "teleport"}, {"action": "end"}]
    with pytest.raises(ConfigError, match="'teleport' is not an offered skill"):
        household_task(spec.model_copy(update={"mission": mission}))


def impossible(spec: EpisodeSpec, **changes: object) -> EpisodeSpec:
    """Return ``spec`` with its mission's fields changed."""
    return spec.model_copy(update={"mission": {**spec.mission, **changes}})


def test_an_expert_skill_not_offered_in_the_setting_is_refused_before_round_one(
    kitchen: None,
) -> None:
    """The privileged all-in-one skill in a sensor-only run: refused at reset, naming the step."""
    plan = [{**GO_FRIDGE, "skill": "all_in_one"}, {"action": "end"}]
    spec = impossible(episode([[GO_FRIDGE]]), expert=plan)
    settings = HouseholdSettings(setting="sensor-only")
    mission = HouseholdMission(EmbeddedBackend(body="manipulator", sensors=()), settings=settings)
    with pytest.raises(ConfigError, match=r"mission\.expert\.0\.skill: 'all_in_one' is not"):
        mission.reset(spec, 0)


def test_an_impossible_task_is_refused_before_round_one_in_one_line(kitchen: None) -> None:
    """mug_1 declared a table: refused at reset, in one line naming the episode and step."""
    objects = {**OBJECTS, "mug_1": {"kind": "table", "role": "item"}}
    spec = impossible(episode([PUT_MUG]), objects=objects)
    mission = HouseholdMission(EmbeddedBackend(body="manipulator", sensors=()))
    with pytest.raises(ConfigError) as refused:
        mission.reset(spec, 0)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("episode test/kitchen: task does not fit world 'test_kitchen'")
    kind = "mission.objects.mug_1: 'mug_1' is of kind mug in the world, the task says table"
    assert kind in message
