import math

import numpy as np
import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import FlightPrimitive as P
from sortie.core.actions import Fly, InvalidAction
from sortie.core.errors import ConfigError
from sortie.core.records import PluginRef, TrajectoryHeader
from sortie.core.trajectory import Trajectory
from sortie.metrics.aerial import score_aerial
from sortie.missions.aerial.mission import AerialMission
from sortie.missions.aerial.spec import aerial_data
from sortie.missions.aerial.vocabulary import TaskAction
from sortie.missions.aerial.vocabulary import TaskActionKind as T
from sortie.testing.episodes import aerial_hop


@pytest.fixture(scope="module")
def backend():
    backend = EmbeddedBackend(body="multirotor", sensors=())
    yield backend
    backend.close()


def fly(backend, spec, actions):
    """Run ``actions`` (until the episode ends); return the trajectory and the runtime."""
    runtime = AerialMission(backend)
    runtime.reset(spec, 0)
    steps = []
    for action in actions:
        if runtime.done:
            break
        steps.append(runtime.step(action)[1])
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="t"),
        backend=PluginRef(name="embedded"),
        seed=0,
        code_version="t",
    )
    return Trajectory(header, steps, runtime.footer()), runtime


FORWARD = Fly(P.FORWARD, 6.0)
DONE = TaskAction(T.DONE)


def test_reaching_the_goal_and_saying_done_is_an_inspection_success(backend):
    """Four 6 m steps reach [24, 0, 20], then done (not a step): SR 1, MP 1, Eff 1 − 4/20, CR 0."""
    trajectory, _ = fly(backend, aerial_hop(), [FORWARD] * 4 + [DONE])
    metrics = score_aerial(trajectory)
    assert trajectory.footer.outcome == "success"
    assert trajectory.steps[3].pose.x == pytest.approx(24.0, abs=0.01)
    assert (metrics["sr"], metrics["mp"], metrics["osr5"]) == (1.0, 1.0, 1.0)
    assert metrics["eff"] == pytest.approx(0.8) and metrics["cr"] == 0.0 and metrics["gap"] == 0
    assert metrics["eff_all_steps"] == pytest.approx(0.75) and metrics["steps"] == 4


def test_magnitudes_are_clamped_to_d_max_and_flagged(backend):
    """Forward 100 m moves d_max = 6 m; a 90° turn turns 30°; a negative move moves nothing."""
    actions = [Fly(P.FORWARD, 100.0), Fly(P.TURN_LEFT, 90.0), Fly(P.UP, -3.0), DONE]
    trajectory, _ = fly(backend, aerial_hop(), actions)
    poses = [step.pose for step in trajectory.steps]
    assert poses[0].x == pytest.approx(6.0, abs=0.01) and poses[1].yaw == pytest.approx(30.0)
    assert poses[2].z == pytest.approx(20.0)
    details = [e.detail for step in trajectory.steps for e in step.events if e.kind == "clamped"]
    assert details == [
        "forward 100 clamped to 6",
        "turn_left 90 clamped to 30",
        "up -3 clamped to 0",
    ]
    assert score_aerial(trajectory)["clamped"] == 3


def test_a_report_from_the_start_succeeds_without_moving(backend):
    """A matching plate reported at once: success with a path of no translation, OSR 0."""
    spec = aerial_hop(("reporting",), answer="KX 42 7Q", answer_kind="plate")
    trajectory, _ = fly(backend, spec, [TaskAction(T.DONE, report="The plate reads kx-427q.")])
    metrics = score_aerial(trajectory)
    assert trajectory.footer.facts["verdict"]["match"] is True
    assert (metrics["sr"], metrics["mp"], metrics["osr5"], metrics["gap"]) == (1, 1, 0, -1)


def test_done_far_from_the_goal_is_a_premature_termination(backend):
    """Done after one step, 18 m short: failure, MP = 6/24."""
    trajectory, _ = fly(backend, aerial_hop(), [FORWARD, DONE])
    assert trajectory.footer.failure_reason == "premature_termination"
    assert score_aerial(trajectory)["mp"] == pytest.approx(6.0 / 24.0, abs=1e-3)


def test_running_out_of_steps_near_the_goal_is_drift(backend):
    """Three steps forward, then turning in place for the rest of the 20: drift, Eff 0."""
    turns = [Fly(P.TURN_LEFT, 30.0)] * 17
    trajectory, _ = fly(backend, aerial_hop(), [FORWARD] * 3 + turns)
    assert trajectory.footer.steps == 20
    assert trajectory.footer.failure_reason == "drift_oscillation"
    assert score_aerial(trajectory)["eff"] == 0.0


def test_reached_but_wrong_yaw_is_an_unmet_objective(backend):
    """At the goal position facing 90° off: the inspection fails on its yaw tolerance."""
    actions = [FORWARD] * 4 + [Fly(P.TURN_LEFT, 30.0)] * 3 + [DONE]
    trajectory, _ = fly(backend, aerial_hop(), actions)
    assert trajectory.footer.failure_reason == "objective_unmet"
    assert trajectory.footer.stages[0].status == "done"


@pytest.mark.parametrize(("action", "success"), [(T.DROP_PAYLOAD, True), (T.COLLECT_SAMPLE, False)])
def test_manipulation_needs_the_right_task_action_at_the_goal(backend, action, success):
    """drop_payload at the goal succeeds; collect_sample there does not."""
    spec = aerial_hop(("manipulation",), task_action="drop_payload")
    trajectory, _ = fly(backend, spec, [FORWARD] * 4 + [TaskAction(action), DONE])
    assert (trajectory.footer.outcome == "success") is success
    assert trajectory.footer.facts["task_actions"][0]["at_goal"] is True


def test_manipulation_fails_when_the_final_heading_is_off_the_goals(backend):
    """The right action at the goal, then a 30° turn: the final pose misses τ_yaw = 15°."""
    spec = aerial_hop(("manipulation",), task_action="drop_payload")
    actions = [*[FORWARD] * 4, TaskAction(T.DROP_PAYLOAD), Fly(P.TURN_LEFT, 30.0), DONE]
    trajectory, _ = fly(backend, spec, actions)
    assert trajectory.footer.failure_reason == "objective_unmet"
    assert trajectory.footer.facts["task_actions"][0]["at_goal"] is True


def test_manipulation_is_judged_on_the_final_pose_not_where_the_action_was(backend):
    """The action at the start, then flying to the goal: the final pose and the task succeed."""
    spec = aerial_hop(("manipulation",), task_action="collect_sample")
    trajectory, _ = fly(backend, spec, [TaskAction(T.COLLECT_SAMPLE), *[FORWARD] * 4, DONE])
    assert trajectory.footer.outcome == "success"
    assert trajectory.footer.facts["task_actions"][0]["at_goal"] is False


def test_manipulation_takes_the_last_task_action_declared(backend):
    """The right action then a wrong one, at the goal: the last one counts, so it fails."""
    spec = aerial_hop(("manipulation",), task_action="drop_payload")
    actions = [*[FORWARD] * 4, TaskAction(T.DROP_PAYLOAD), TaskAction(T.COLLECT_SAMPLE), DONE]
    trajectory, _ = fly(backend, spec, actions)
    assert trajectory.footer.outcome == "failure"


def test_invalid_output_spends_a_step_and_the_episode_goes_on(backend):
    """An unparseable answer is an invalid_action step; the flight continues."""
    actions = [InvalidAction("<garbage>", "no JSON"), *[FORWARD] * 4, DONE]
    trajectory, _ = fly(backend, aerial_hop(), actions)
    assert trajectory.steps[0].events[0].kind == "invalid_action"
    assert trajectory.footer.outcome == "success" and trajectory.footer.steps == 6


def test_a_patrol_along_the_route_succeeds(backend):
    """Flying the 24 m reference route covers it: IoU above 0.5 and MP 1."""
    spec = aerial_hop(("patrol",), patrol=[[0.0, 0.0, 20.0], [24.0, 0.0, 20.0]])
    trajectory, _ = fly(backend, spec, [FORWARD] * 4 + [DONE])
    assert trajectory.footer.outcome == "success" and score_aerial(trajectory)["mp"] == 1.0


def test_a_hover_covers_nothing_of_a_patrol_route(backend):
    """Turning in place, then done: no pose moved, so the IoU (and MP) is 0, not a disc."""
    spec = aerial_hop(("patrol",), patrol=[[0.0, 0.0, 20.0], [24.0, 0.0, 20.0]])
    trajectory, _ = fly(backend, spec, [Fly(P.TURN_LEFT, 30.0)] * 2 + [DONE])
    metrics = score_aerial(trajectory)
    assert (metrics["iou"], metrics["mp"], metrics["sr"]) == (0.0, 0.0, 0.0)
    assert metrics["iou_start2d"] > 0.4  # the old reading: the disc round the start


def test_a_mission_starting_at_its_goal_is_unscored_not_averaged_as_minus_one(backend):
    """d_0 = 0: MP is NaN and the episode is counted as unscored."""
    spec = aerial_hop(goal=[0.0, 0.0, 20.0, 90.0])
    trajectory, _ = fly(backend, spec, [DONE])
    metrics = score_aerial(trajectory)
    assert math.isnan(metrics["mp"]) and metrics["unscored"] == 1.0 and metrics["sr"] == 0.0


@pytest.mark.parametrize(
    ("mission", "message"),
    [
        ({"types": ["patrol"], "patrol": [[0, 0, 20]]}, "at least 2 points, got 1"),
        ({"types": ["reporting"]}, "needs an expected answer"),
        ({"types": ["manipulation"], "task_action": "done"}, "needs a task action"),
        ({"types": ["reporting", "reporting"], "answer": "3"}, "repeat a type"),
    ],
)
def test_incomplete_missions_are_refused_with_the_reason(mission, message):
    """Each type's success rule needs its data; the error names the episode."""
    with pytest.raises(ConfigError, match=message) as info:
        aerial_data(aerial_hop(**mission))
    assert "handmade/hop-0" in str(info.value)


@pytest.mark.parametrize(
    "mission",
    [
        {"types": ["inspection"]},
        {
            "types": ["reporting", "inspection"],
            "answer": "7",
            "answer_kind": "number",
            "goal": [10.0, 15.0, 12.0, 135.0],
        },
        {
            "types": ["manipulation"],
            "task_action": "collect_sample",
            "goal": [-12.0, 6.0, 14.0, -90.0],
        },
        {
            "types": ["patrol"],
            "patrol": [[0.0, 0.0, 20.0], [20.0, 0.0, 20.0], [20.0, 20.0, 20.0]],
            "goal": [20.0, 20.0, 20.0, 90.0],
        },
    ],
)
def test_the_oracle_completes_every_mission_type(tmp_path, mission):
    """Flown by the runner with the oracle: success, and the record rescores to SR 1."""
    from sortie.core.records_io import Suite, SuiteHeader
    from sortie.run.suite import RunSettings, run_suite

    suite = Suite(SuiteHeader(suite="t"), [aerial_hop(**mission)])
    result = run_suite(suite, "oracle", {}, RunSettings(tmp_path))[0]
    assert result.footer.outcome == "success", result.footer
    assert result.metrics["sr"] == 1.0 and result.metrics["eff"] > 0


def test_the_random_agent_flies_and_ends_its_flights_early(tmp_path):
    """Random flights over ten seeds: none succeeds, most end before T_max by done or land."""
    from sortie.core.records_io import Suite, SuiteHeader
    from sortie.run.suite import RunSettings, run_suite

    episodes = [aerial_hop(episode_id=f"hop-{i}") for i in range(10)]
    results = run_suite(
        Suite(SuiteHeader(suite="t"), episodes), "random", {}, RunSettings(tmp_path)
    )
    assert all(r.metrics["sr"] == 0.0 for r in results)
    assert sum(r.footer.steps < 20 for r in results) >= 7


def test_the_run_setting_picks_the_judge_and_an_unknown_one_fails_before_flying(tmp_path):
    """-F judge= reaches the mission (its name is in the verdict); a misspelt one is refused."""
    from sortie.core.errors import ParameterError
    from sortie.core.records_io import read_trajectory
    from sortie.missions.aerial import judge as judges
    from sortie.run.jobs import RunSpec

    with pytest.raises(ParameterError, match="judge='exactt'.*Did you mean 'exact'"):
        RunSpec.resolve("oracle", {}, family="aerial", settings={"judge": "exactt"})
    spec = aerial_hop(("reporting",), answer="7", answer_kind="number")
    calls = []

    def recording(report, expected, kind):
        calls.append(report)
        return judges.exact_judge(report, expected, kind)

    with judges.JUDGES.override("recording", recording):
        run = RunSpec.resolve("oracle", {}, family="aerial", settings={"judge": "recording"})
        assert run.config().settings == {"judge": "recording"}
        from sortie.backends.embedded import EmbeddedBackend
        from sortie.run.jobs import Job, run_job

        backend = EmbeddedBackend(**run.backend_for("aerial").args)
        result = run_job(Job("t", spec, 0, tmp_path / "r.jsonl", run), backend)
        backend.close()
    assert calls == ["7"] and result.footer.facts["judge"] == "recording"
    assert read_trajectory(tmp_path / "r.jsonl").footer.facts["verdict"]["match"] is True


def test_collision_rate_counts_the_steps_that_touched_something(backend):
    """Down 6 m four times from 20 m: the fourth step meets the ground; CR is that share of 4."""
    actions = [Fly(P.DOWN, 6.0)] * 4
    trajectory, _ = fly(backend, aerial_hop(), actions + [DONE])
    touched = [any(e.kind == "contact" for e in s.events) for s in trajectory.steps]
    assert touched[:3] == [False, False, False] and touched[3]
    metrics = score_aerial(trajectory)
    motion = touched[:4]  # the final done is not a step
    assert metrics["cr"] == pytest.approx(sum(motion) / 4) and metrics["cr"] > 0
    assert metrics["cr_all_steps"] == pytest.approx(sum(touched) / 5)


def test_a_run_of_two_families_is_refused(tmp_path):
    """Rescue and aerial suites in one run: a clear error naming each suite's family."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.run.batch import RunRequest, plan_run
    from sortie.run.store import Store
    from sortie.testing.episodes import room_rescue

    write_suite(tmp_path / "a.jsonl", SuiteHeader(suite="a"), [aerial_hop()])
    write_suite(tmp_path / "r.jsonl", SuiteHeader(suite="r"), [room_rescue()])
    request = RunRequest(
        (str(tmp_path / "a.jsonl"), str(tmp_path / "r.jsonl")), "random", store=tmp_path / "s.db"
    )
    with Store(request.store) as store, pytest.raises(ConfigError, match="a: aerial; r: rescue"):
        plan_run(request, store)


def test_an_aerial_runs_stored_config_names_the_multirotor_and_its_camera(tmp_path):
    """Resuming compares the stored config, so it must describe the backend actually used."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.missions.aerial.spec import CAMERA as AERIAL_CAMERA
    from sortie.run.batch import RunRequest, plan_run
    from sortie.run.store import Store

    write_suite(tmp_path / "a.jsonl", SuiteHeader(suite="a"), [aerial_hop()])
    request = RunRequest(
        (str(tmp_path / "a.jsonl"),), "random", store=tmp_path / "s.db", run_id="r"
    )
    with Store(request.store) as store:
        plan_run(request, store)
        backend = store.run_config("r").backend.args
    assert backend["body"] == "multirotor" and backend["camera"] == AERIAL_CAMERA


def missionbench_success(trajectory):
    """Return SR as MissionBench's code decides it, from the record alone (written apart)."""
    mission, facts = trajectory.header.episode.mission, trajectory.footer.facts
    final = trajectory.steps[-1].pose if trajectory.steps else trajectory.header.episode.start
    goal = mission["goal"]
    yaw_error = abs((final.yaw - goal[3] + 180.0) % 360.0 - 180.0)
    geometry = all(abs(a - b) <= 5.0 for a, b in zip(final.position(), goal[:3], strict=True))
    geometry = geometry and yaw_error <= 15.0
    report = bool(facts["verdict"] and facts["verdict"]["match"])
    declared = [a["kind"] for a in facts["task_actions"]]
    task = bool(declared) and declared[-1] == mission.get("task_action")
    flown = [s.pose.position() for s in trajectory.steps if s.action.type != "task"]
    rules = {
        "reporting": lambda: report,
        "inspection": lambda: geometry or report,
        "manipulation": lambda: geometry and task,
        "patrol": lambda: _missionbench_iou(flown, mission["patrol"]) >= 0.5,
    }
    return all(rules[t]() for t in mission["types"])


def _missionbench_iou(flown, route):
    """Area IoU of 20 m buffers of both paths resampled by 3D arc length (hover: 0)."""
    from shapely.geometry import LineString

    def resampled(points):
        array = np.asarray(points, dtype=float)
        along = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(array, axis=0), axis=1))])
        at = np.linspace(0.0, along[-1], 100)
        return LineString(
            zip(np.interp(at, along, array[:, 0]), np.interp(at, along, array[:, 1]), strict=True)
        )

    if len(flown) < 2 or np.allclose(flown, flown[0]):
        return 0.0
    a, b = resampled(flown).buffer(20.0), resampled(route).buffer(20.0)
    return a.intersection(b).area / a.union(b).area


TURN = Fly(P.TURN_LEFT, 30.0)
ROUTE = [[0.0, 0.0, 20.0], [24.0, 0.0, 20.0]]
PARITY_FLIGHTS = {
    "inspection reached": ((), [FORWARD] * 4 + [DONE], 1.0),
    "inspection facing away": ((), [FORWARD] * 4 + [TURN] * 3 + [DONE], 0.0),
    "inspection short": ((), [FORWARD] * 3 + [DONE], 0.0),
    "drop at goal": (
        ("manipulation", "drop_payload"),
        [FORWARD] * 4 + [TaskAction(T.DROP_PAYLOAD), DONE],
        1.0,
    ),
    "drop then turn": (
        ("manipulation", "drop_payload"),
        [FORWARD] * 4 + [TaskAction(T.DROP_PAYLOAD), TURN, DONE],
        0.0,
    ),
    "sample first": (
        ("manipulation", "collect_sample"),
        [TaskAction(T.COLLECT_SAMPLE)] + [FORWARD] * 4 + [DONE],
        1.0,
    ),
    "land at goal": (("manipulation", "land"), [FORWARD] * 4 + [TaskAction(T.LAND)], 1.0),
    "land short": (("manipulation", "land"), [FORWARD] * 3 + [TaskAction(T.LAND)], 0.0),
    "patrol flown": (("patrol",), [FORWARD] * 4 + [DONE], 1.0),
    "patrol one pose": (("patrol",), [FORWARD] + [DONE], 0.0),
    "patrol hover": (("patrol",), [TURN, TURN, DONE], 0.0),
}
"""Flights over the 24 m hop, with the SR MissionBench's rules give them (worked by hand)."""


@pytest.mark.parametrize("name", PARITY_FLIGHTS)
def test_success_equals_missionbench_rules_recomputed_from_the_record(backend, name):
    """The SR sortie scores equals MissionBench's rules applied to the record by this test."""
    kind, actions, expected = PARITY_FLIGHTS[name]
    extra = {"task_action": kind[1]} if kind and kind[0] == "manipulation" else {}
    if kind and kind[0] == "patrol":
        extra = {"patrol": ROUTE}
    spec = aerial_hop((kind[0],) if kind else ("inspection",), **extra)
    trajectory, _ = fly(backend, spec, actions)
    assert float(missionbench_success(trajectory)) == expected
    assert score_aerial(trajectory)["sr"] == expected


def test_the_max_move_setting_replaces_the_episodes_d_max(backend):
    """-F max_move=2 clamps a 100 m move to 2 m (the episode says 6) and the brief says 2."""
    from sortie.missions.aerial.settings import AerialSettings

    spec = aerial_hop()
    runtime = AerialMission(backend, settings=AerialSettings(max_move=2.0))
    runtime.reset(spec, 0)
    assert runtime.brief.limits.max_move == 2.0 != spec.mission["max_move"]
    _, record = runtime.step(Fly(P.FORWARD, 100.0))
    assert record.pose.x == pytest.approx(spec.start.x + 2.0, abs=0.01)
    assert [e.detail for e in record.events] == ["forward 100 clamped to 2"]


def test_an_unset_max_move_is_left_out_of_the_settings_a_header_holds():
    """Without -F max_move the settings' JSON form is what it was before the setting existed."""
    from sortie.missions.aerial.settings import AerialSettings

    assert AerialSettings().model_dump(mode="json") == {"judge": "exact"}
    assert AerialSettings(max_move=3.5).model_dump(mode="json")["max_move"] == 3.5


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "far"])
def test_a_max_move_that_is_not_a_positive_distance_is_refused(value):
    """-F max_move must be a finite number of metres above 0; the refusal names the setting."""
    from sortie.core.errors import ParameterError
    from sortie.missions.registry import FAMILIES

    with pytest.raises(ParameterError, match=rf"-F max_move='{value}': .*max_move=None"):
        FAMILIES.get("aerial").parse_settings({"max_move": value})


def test_a_show_pose_episode_gives_the_exact_pose_to_an_agent_without_the_sensor(backend):
    """show_pose true: every observation carries the body's true pose; false: none."""
    runtime = AerialMission(backend)
    first = runtime.reset(aerial_hop(show_pose=True), 0)
    assert first.pose == backend.pose()
    after, record = runtime.step(FORWARD)
    assert after.pose == record.pose == backend.pose()
    assert runtime.reset(aerial_hop(), 0).pose is None


def test_an_agent_reading_the_pose_sensor_keeps_its_settings_in_a_show_pose_episode(backend):
    """show_pose does not override the run's pose settings: a start-frame reading stays one."""
    from sortie.core.run_config import PoseSettings

    runtime = AerialMission(backend)
    runtime.pose_settings = PoseSettings(frame="start")
    spec = aerial_hop(show_pose=True)
    runtime.reset(spec, 0)
    after, _ = runtime.step(FORWARD)
    assert after.pose is not None and after.pose.x == pytest.approx(6.0, abs=0.01)
    assert after.pose.z == pytest.approx(0.0, abs=0.01) != spec.start.z


def test_the_oracle_flies_in_steps_of_the_max_move_setting(tmp_path):
    """With -F max_move=3 the oracle asks for 3 m moves: no clamp, eight steps for the 24 m."""
    from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
    from sortie.run.suite import RunSettings, run_suite

    spec = aerial_hop()
    run = RunSettings(out=tmp_path, family_settings={"max_move": 3.0})
    (result,) = run_suite(Suite(SuiteHeader(suite="hop"), [spec]), "oracle", {}, run)
    steps = read_trajectory(result.path).steps
    assert result.footer.outcome == "success"
    assert not [e for step in steps for e in step.events if e.kind == "clamped"]
    moves = [s.action for s in steps if getattr(s.action, "primitive", None) == "forward"]
    assert len(moves) == 8 and all(m.magnitude <= 3.0 for m in moves)
