"""The brief tells agents the action limits and the camera, so none has to parse prose."""

from sortie.backends.embedded import EmbeddedBackend
from sortie.missions.aerial.mission import AerialMission
from sortie.missions.aerial.spec import aerial_data
from sortie.missions.rescue.mission import RescueMission
from sortie.sim.camera import CameraSpec
from sortie.testing.episodes import aerial_hop, room_rescue


def test_an_aerial_brief_carries_d_max_the_turn_limit_the_step_budget_and_the_camera():
    """d_max, 30°, T_max and the pitched camera reach the agent through the brief."""
    spec = aerial_hop()
    camera = CameraSpec(width=64, height=48, hfov=90.0, pitch=-45.0)
    mission = AerialMission(EmbeddedBackend(body="multirotor", sensors=(), camera=camera))
    mission.reset(spec, seed=0)
    data, brief = aerial_data(spec), mission.brief
    assert brief is not None
    assert (brief.limits.max_move, brief.limits.max_turn, brief.limits.max_steps) == (
        data.max_move,
        data.max_turn,
        data.step_budget,
    )
    assert brief.camera is not None
    assert (brief.camera.width, brief.camera.height, brief.camera.pitch) == (64, 48, -45.0)


def test_a_rescue_brief_carries_the_walker_limits_and_the_camera():
    """The walker's turn and speed limits and its level camera are in the brief."""
    mission = RescueMission(EmbeddedBackend(body="walker", sensors=()))
    mission.reset(room_rescue(), seed=0)
    brief = mission.brief
    assert brief is not None and brief.camera is not None
    assert (brief.limits.max_turn, brief.limits.max_speed, brief.limits.max_move) == (
        30.0,
        1.5,
        None,
    )
    assert brief.camera.pitch == 0.0
