import pytest

from sortie.core.actions import Interact, Interaction, InvalidAction, Move
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import Event, EventKind
from sortie.core.pose import Pose
from sortie.missions.rescue.mission import RescueMission
from sortie.missions.rescue.settings import RescueSettings
from sortie.testing.scripted import ScriptedBackend, glide

OBJECTS = {"casualty": (5.0, 0.0, 0.0), "stretcher": (-1.0, 0.0, 0.0), "door_0": (2.5, 0.0, 0.0)}


def _episode(budget: float = 60.0) -> EpisodeSpec:
    return EpisodeSpec(
        episode_id="t/rules",
        family="rescue",
        level="L1",
        world=WorldSpec(builder="scripted", seed=0),
        start=Pose(0, 0, 0, 0),
        targets={"casualty": "casualty", "stretcher": "stretcher"},
        mission={
            "clue_text": "red jacket",
            "reference_view": [0, 0, 1.6, 0, 0],
            "budget_s": budget,
            "path_distance": 5.0,
            "shortest_length": 11.0,
        },
    )


def _mission(
    triggers: str = "assisted", clock: str = "sim", script=glide, budget=60.0, objects=OBJECTS
) -> RescueMission:
    settings = RescueSettings(triggers=triggers)
    mission = RescueMission(ScriptedBackend(objects, script), clock=clock, settings=settings)
    mission.reset(_episode(budget), seed=0)
    return mission


def _walk(mission: RescueMission, steps: int, turn: float = 0.0, speed: float = 1.5):
    records = []
    for _ in range(steps):
        if mission.done:
            break
        records.append(mission.step(Move(turn, speed))[1])
    return records


def test_assisted_episode_latches_stages_in_order_and_succeeds():
    """Walk to the casualty (auto grab), turn back, walk to the stretcher (auto drop): success."""
    mission = _mission()
    _walk(mission, 12)  # 3.6 m: within 1.5 m of the casualty at 5 m
    assert mission.backend.holding() == "casualty"
    _walk(mission, 6, turn=30.0, speed=0.0)  # turn around
    _walk(mission, 30)
    footer = mission.footer()
    assert footer.outcome == "success" and footer.failure_reason is None
    s1, s2, s3, s4 = footer.stages
    assert s1.d_init == pytest.approx(5.0) and s1.done_step == 0  # 5 m <= 7.5 m at the start
    assert s2.done_step == 12  # 5 - 12 * 0.3 = 1.4 m <= 1.5 m: the assisted grab fires
    assert [s.status for s in footer.stages] == ["done"] * 4
    assert s2.done_step is not None and s3.started_step == s2.done_step


def test_stage_one_is_done_at_reset_when_starting_inside_the_sighting_radius():
    """S1 latches at step 0 when the casualty is already within 7.5 m."""
    mission = _mission()
    assert mission.tracker.statuses()["S1"] == "done"


def test_native_grab_out_of_range_fails_and_in_range_succeeds():
    """Under native triggers a far grab is a failed interaction; a near one picks up."""
    mission = _mission(triggers="native")
    _, far = mission.step(Interact(Interaction.GRAB))
    assert [e.kind for e in far.events] == [EventKind.INTERACTION_FAILED.value]
    _walk(mission, 13)
    _, near = mission.step(Interact(Interaction.GRAB))
    assert EventKind.PICKED_UP.value in [e.kind for e in near.events]


def test_invalid_action_spends_time_and_does_not_move():
    """A turn of 45 degrees is an invalid_action: the clock advances, the pose stays."""
    mission = _mission()
    _, record = mission.step(Move(turn=45.0, speed=1.0))
    assert record.events[0].kind == EventKind.INVALID_ACTION.value
    assert "turn 45.0 outside [-30, 30]" in record.events[0].detail
    assert record.pose == Pose(0, 0, 0, 0) and record.clock_sim == pytest.approx(0.2)


def test_unparseable_output_is_kept_verbatim_as_an_invalid_action():
    """An InvalidAction's raw text reaches the record."""
    mission = _mission()
    _, record = mission.step(InvalidAction(raw="go left!!", error="not JSON"))
    assert "not JSON: go left!!" in record.events[0].detail


def test_budget_runs_out_with_the_active_stage_as_reason():
    """Standing still with a 2 s budget fails after 10 steps with timeout_s2."""
    mission = _mission(budget=2.0)
    records = _walk(mission, 50, speed=0.0)
    assert len(records) == 10 and mission.footer().failure_reason == "timeout_s2"


def test_latency_clock_charges_the_decision_time():
    """With the latency clock, 1 s decisions spend a 3 s budget in 3 steps."""
    mission = _mission(clock="latency", budget=3.0)
    steps = 0
    while not mission.done:
        mission.step(Move(), decision_seconds=1.0)
        steps += 1
    footer = mission.footer()
    assert steps == 3 and footer.clock_latency == pytest.approx(3.0)
    assert footer.clock_sim == pytest.approx(0.6)


def test_collisions_count_once_then_cool_down():
    """Contact on every step for 12 steps counts 2 collisions (cooldown of 5 steps)."""

    def bump(pose, action):
        return pose, (Event(EventKind.CONTACT, "wall_0"),)

    mission = _mission(script=bump)
    records = _walk(mission, 12)
    assert sum(r.collisions for r in records) == 2
    assert [r.index for r in records if r.collisions] == [1, 7]


def test_assisted_door_opens_when_near_and_facing_it():
    """Walking at a closed door opens it once within 1.5 m and facing it."""
    mission = _mission()
    backend = mission.backend
    records = _walk(mission, 4)
    opened = [r.index for r in records for e in r.events if e.kind == "door_opened"]
    assert opened == [4] and backend.door_state("door_0")  # 2.5 - 1.2 = 1.3 m at step 4


def test_wrong_family_is_refused():
    """A rescue runtime refuses an aerial episode, naming both."""
    mission = RescueMission(ScriptedBackend(OBJECTS))
    spec = _episode().model_copy(update={"family": "aerial"})
    with pytest.raises(ConfigError, match="family 'aerial'"):
        mission.reset(spec, 0)


def test_missing_mission_field_names_the_episode_and_field():
    """A rescue episode without a budget fails with the episode id and the field."""
    spec = _episode()
    mission_data = dict(spec.mission)
    del mission_data["budget_s"]
    with pytest.raises(ConfigError, match=r"episode t/rules: mission.budget_s: Field required"):
        RescueMission(ScriptedBackend(OBJECTS)).reset(
            spec.model_copy(update={"mission": mission_data}), 0
        )


def test_no_hand_off_to_a_stretcher_on_another_floor():
    """Carrying the casualty 3 m above the stretcher never drops it, whatever the distance."""
    objects = {"casualty": (0.5, 0.0, 3.0), "stretcher": (1.0, 0.0, 0.0)}
    mission = _mission(objects=objects)
    mission.backend._pose = Pose(0, 0, 3.0, 0)  # the body stands on the upper floor
    mission.step(Move())
    assert mission.backend.holding() == "casualty"
    _walk(mission, 5, speed=0.5)
    assert mission.backend.holding() == "casualty" and not mission.dropped_in_zone
