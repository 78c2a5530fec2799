from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.pose import Pose
from sortie.testing import BackendContract, ScriptedBackend


class TestScriptedBackend(BackendContract):
    """The scripted double honours the same contract as a real backend."""

    landmark = "wall_0"

    def make_backend(self) -> ScriptedBackend:
        return ScriptedBackend({"wall_0": (5.0, 0.0, 0.0)})

    def make_episode(self) -> EpisodeSpec:
        return EpisodeSpec(
            episode_id="t/0",
            family="rescue",
            start=Pose(0, 0, 0, 0),
            world=WorldSpec(builder="none", seed=0),
        )


def test_glide_moves_speed_times_period_along_the_heading():
    """A Move of 1.5 m/s after a 90 degree turn goes 0.3 m along +y."""
    backend = ScriptedBackend({})
    backend.reset(TestScriptedBackend().make_episode(), 0)
    from sortie.core.actions import Move

    pose = backend.step(Move(turn=90.0, speed=1.5)).observation.pose
    assert abs(pose.x) < 1e-9 and abs(pose.y - 0.3) < 1e-9 and pose.yaw == 90.0
