import socket

import numpy as np
import pytest

from sortie.backends.airsim import AirSimBackend, refused_message, target_pose
from sortie.core.actions import FlightPrimitive, Fly
from sortie.core.errors import BackendError, ConfigError
from sortie.core.pose import Pose
from sortie.missions.aerial.spec import CAMERA
from sortie.testing import BackendContract
from sortie.testing.episodes import aerial_hop

pytest.importorskip("cosysairsim")
from sortie.testing.airsim_server import AirSimServer  # noqa: E402  (needs msgpack)

SMALL = CAMERA | {"width": 32, "height": 32}


def _airsim(spec):
    """The embedded episode as an imported one: the same poses on an AirSim environment."""
    return spec.model_copy(update={"world": spec.world.model_copy(update={"builder": "airsim.T"})})


@pytest.fixture(scope="module")
def server():
    with AirSimServer(aerial_hop(), SMALL) as double:
        yield double


def _backend(server, **args) -> AirSimBackend:
    return AirSimBackend(camera=SMALL, port=server.port, **args)


def _landmark(server) -> str:
    return next(o.name for o in server.world.oracle_view().objects() if o.name.startswith("house"))


class TestAirSimBackend(BackendContract):
    """The airsim backend, over loopback to the local AirSim double, keeps the contract."""

    @pytest.fixture(autouse=True)
    def _server(self, server):
        self.server = server
        self.landmark = _landmark(server)

    def make_backend(self) -> AirSimBackend:
        return _backend(self.server, sensors=("rgb", "depth"))

    def make_episode(self):
        return _airsim(aerial_hop())

    def forward(self):
        return Fly(FlightPrimitive.FORWARD, 2.0)

    def test_frames_have_the_declared_types(self) -> None:
        """RGB is uint8 and depth float32 of one size (AirSim here renders no semantic image)."""
        backend = self.make_backend()
        frames = backend.reset(self.make_episode(), 0).frames
        assert frames.rgb is not None and frames.depth is not None
        assert frames.rgb.dtype == np.uint8 and frames.depth.dtype == np.float32
        assert frames.rgb.shape[:2] == frames.depth.shape
        backend.close()


def test_target_pose_of_a_left_move_at_yaw_90_is_minus_x():
    """Moving left 3 m while facing +y ends 3 m along -x."""
    goal = target_pose(Pose(0.0, 0.0, 10.0, 90.0), Fly(FlightPrimitive.LEFT, 3.0))
    assert goal.as_list() == pytest.approx([-3.0, 0.0, 10.0, 90.0], abs=1e-9)


def test_a_forward_pose_move_goes_its_magnitude(server):
    """Forward 6 m from the start ends at x 6 with nothing hit."""
    backend = _backend(server)
    backend.reset(_airsim(aerial_hop()), 0)
    outcome = backend.step(Fly(FlightPrimitive.FORWARD, 6.0))
    assert outcome.observation.pose.as_list() == pytest.approx([6.0, 0.0, 20.0, 0.0], abs=1e-6)
    assert not backend.collided()
    backend.close()


def test_a_turn_left_reads_back_counter_clockwise(server):
    """turn_left 30 from yaw 0 reads back as yaw 30 through the NED quaternion."""
    backend = _backend(server)
    backend.reset(_airsim(aerial_hop()), 0)
    assert backend.step(Fly(FlightPrimitive.TURN_LEFT, 30.0)).observation.pose.yaw == (
        pytest.approx(30.0, abs=1e-6)
    )
    backend.close()


def test_flying_into_the_ground_is_a_collision(server):
    """Descending 30 m from 20 m stops on the ground and reports the contact."""
    backend = _backend(server)
    backend.reset(_airsim(aerial_hop()), 0)
    outcome = backend.step(Fly(FlightPrimitive.DOWN, 30.0))
    assert backend.collided() and outcome.events and 0.0 < outcome.observation.pose.z < 20.0
    backend.close()


def test_velocity_moves_reach_the_same_pose(server):
    """-b moves=velocity flies forward 6 m to the same pose as a pose move."""
    backend = _backend(server, moves="velocity")
    backend.reset(_airsim(aerial_hop()), 0)
    pose = backend.step(Fly(FlightPrimitive.FORWARD, 6.0)).observation.pose
    assert pose.as_list() == pytest.approx([6.0, 0.0, 20.0, 0.0], abs=1e-6)
    backend.close()


def test_a_walker_is_refused():
    """The airsim backend drives a multirotor only."""
    with pytest.raises(ConfigError, match="only 'multirotor'"):
        AirSimBackend(body="walker")


def test_a_refused_connection_names_host_and_port():
    """Nothing listening gives one message with host:port and the usual causes."""
    with socket.socket() as probe:  # bound, not listening: refused, and no one else's port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        backend = AirSimBackend(port=port, timeout=2)
        with pytest.raises(BackendError, match=rf"cannot connect to AirSim at 127\.0\.0\.1:{port}"):
            backend.reset(_airsim(aerial_hop()), 0)
    assert "ApiServerPort" in refused_message("h", 1, "x")


def test_an_aerial_mission_scores_the_same_as_on_the_embedded_backend(tmp_path):
    """The random agent's flight, through AirSim and embedded, has the same metrics."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.run.batch import RunRequest
    from tests.conftest import run_stored

    spec = aerial_hop(episode_id="e2e/0")
    runs = {}
    with AirSimServer(spec, CAMERA) as double:
        for name, episode, args in (
            ("embedded", spec, {}),
            ("airsim", _airsim(spec), {"port": str(double.port)}),
        ):
            suite = tmp_path / f"{name}.jsonl"
            write_suite(suite, SuiteHeader(suite=name), [episode])
            request = RunRequest(
                (str(suite),),
                "random",
                store=tmp_path / name / "s.db",  # a store a folder: records go beside it
                run_id="r",
                backend=name,
                backend_args=args,
                seed=5,
            )
            [runs[name]] = run_stored(request)
    a, b = runs["embedded"], runs["airsim"]
    assert (b.outcome, b.steps) == (a.outcome, a.steps) and b.steps > 0
    assert b.metrics == pytest.approx(a.metrics, nan_ok=True, abs=1e-6)
