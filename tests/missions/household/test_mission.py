"""The household rules: rounds and their budget, how an episode ends, views, determinism."""

from __future__ import annotations

import json

import pytest

from sortie.agents.oracle import OracleAgent
from sortie.agents.random_agent import RandomAgent
from sortie.backends.base import ObjectInfo
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError
from sortie.missions.household.house import House
from sortie.missions.household.mission import HouseholdMission
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from tests.missions.household.conftest import PUT_MUG, Play, go
from tests.missions.household.kitchen import episode


def test_the_oracle_with_perfect_skills_succeeds(play: Play) -> None:
    """The oracle opens the fridge, takes the mug to the table and says end: success."""
    recorder = play(OracleAgent(), skills="perfect")
    assert recorder.footer.outcome == "success"
    assert [s.part.action for s in recorder.steps] == [
        "go_to",
        "open",
        "pick",
        "go_to",
        "put",
        "end",
    ]


def test_the_oracle_replans_after_failures(play: Play) -> None:
    """With the default skills some rounds fail on some seed, and the oracle still succeeds."""
    outcomes = [play(OracleAgent(), seed=seed) for seed in range(30)]
    replanned = [
        r for r in outcomes if any(s.part.failed for s in r.steps) and r.footer.outcome == "success"
    ]
    assert replanned


def test_ending_before_the_keypath_is_done_fails(play: Play) -> None:
    """End after a go_to alone: the planner ended an unfinished task."""
    footer = play([go("fridge_0")]).footer
    assert (footer.outcome, footer.failure_reason) == ("failure", "ended_unfinished")


def test_the_rounds_run_out_at_the_budget(play: Play) -> None:
    """A planner that never says end stops at max_rounds rounds."""
    script = [go("table_0"), go("counter_0")] * 5
    recorder = play(script, episode([PUT_MUG], max_rounds=6))
    assert len(recorder.steps) == 6
    assert recorder.footer.failure_reason == "rounds_exhausted"


def test_the_same_seed_gives_the_same_record(play: Play) -> None:
    """Two runs of the random planner with one seed give identical step records."""
    first, second = (play(RandomAgent(), seed=5) for _ in range(2))
    dump = [
        json.dumps([s.model_dump(mode="json", exclude={"timings"}) for s in r.steps])
        for r in (first, second)
    ]
    assert dump[0] == dump[1]


def test_random_planner_fails_the_task(play: Play) -> None:
    """Random subtasks do not carry out the keypath on these seeds."""
    outcomes = [play(RandomAgent(), seed=seed).footer.outcome for seed in range(5)]
    assert outcomes.count("success") == 0


def test_four_views_front_left_back_right(kitchen: None) -> None:
    """At the start (facing +x) the counter is in the front view, the fridge not; four views."""
    backend = EmbeddedBackend(body="manipulator", sensors=("rgb",))
    observation = HouseholdMission(backend).reset(episode([PUT_MUG]), 0)
    assert isinstance(observation, HouseholdObservation)
    assert len(observation.views) == len(VIEW_NAMES) == 4
    assert all(v.rgb is not None for v in observation.views)
    front, _, back, _ = observation.detections
    assert "counter_0" in front and "counter_0" not in back


def test_the_brief_names_the_views_actions_and_skills(kitchen: None) -> None:
    """The brief says the views' order and offers the six actions and five skills."""
    mission = HouseholdMission(EmbeddedBackend(body="manipulator", sensors=()))
    mission.reset(episode([PUT_MUG]), 0)
    brief = mission.brief
    assert "front, left, back, right" in brief.text
    assert brief.actions == ("go_to", "pick", "put", "open", "close", "end")
    assert [name for name, _ in brief.skills] == [
        "image_nav",
        "object_nav",
        "grasp",
        "articulate",
        "all_in_one",
    ]


def test_a_container_without_a_door_is_a_clear_error() -> None:
    """A scene whose container names no door is refused, naming the container and attribute."""
    approach = {"approach_x": 1.0, "approach_y": 0.0, "approach_yaw": 180.0}
    room = ObjectInfo(
        "kitchen_0", "floor", (0.0, 0.0, 0.0), {"role": "room", "room_type": "kitchen", **approach}
    )
    surface = {f"surface_{k}": 0.0 for k in ("xmin", "ymin", "xmax", "ymax")}
    attributes = {"role": "container", "kind": "fridge", "room": "kitchen_0", "inside_z": 0.5}
    attributes |= {"colour": "white", "material": "metal", **approach, **surface}
    box = ObjectInfo("fridge_0", "fridge", (0.0, 0.0, 0.0), attributes)
    with pytest.raises(ConfigError, match="object 'fridge_0': attribute 'door' must be a name"):
        House.from_objects([room, box], lambda door: False)


def test_the_mission_reads_the_contract_as_strictly_as_the_simulator() -> None:
    """One reader: an item naming a host that is not a receptacle fails the same way."""
    approach = {"approach_x": 1.0, "approach_y": 0.0, "approach_yaw": 180.0}
    room = ObjectInfo(
        "kitchen_0", "floor", (0.0, 0.0, 0.0), {"role": "room", "room_type": "kitchen", **approach}
    )
    mug = {"role": "item", "kind": "mug", "colour": "red", "material": "ceramic"}
    item = ObjectInfo("mug_0", "mug", (0.0, 0.0, 0.0), {**mug, "room": "kitchen_0", "on": "sofa_0"})
    with pytest.raises(ConfigError, match="'on' names 'sofa_0', which is not a receptacle"):
        House.from_objects([room, item], lambda door: False)


def test_a_task_on_a_world_without_its_things_is_refused_before_round_one(kitchen: None) -> None:
    """The kitchen task on a room world: a ConfigError naming the missing things, not a play."""
    spec = episode([PUT_MUG]).model_copy(
        update={"world": episode([PUT_MUG]).world.model_copy(update={"builder": "flexible_room"})}
    )
    mission = HouseholdMission(EmbeddedBackend(body="manipulator", sensors=()))
    with pytest.raises(ConfigError, match=r"task does not fit world 'flexible_room'.*not in"):
        mission.reset(spec, 0)
