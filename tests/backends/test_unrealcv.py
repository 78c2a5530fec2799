import random
import socket

import numpy as np
import pytest

from sortie.backends.unrealcv import UnrealCVBackend, refused_message
from sortie.core.actions import Move
from sortie.core.errors import BackendError, ConfigError
from sortie.core.observation import EventKind
from sortie.core.pose import Pose
from sortie.testing import BackendContract
from sortie.testing.episodes import room_rescue
from sortie.testing.unrealcv_server import UnrealCVServer

pytest.importorskip("unrealcv")

CAMERA = {"width": 64, "height": 48, "hfov": 90.0, "pitch": 0.0}


def _unreal(spec):
    """The embedded episode as an imported one: the same placements on an Unreal map."""
    world = spec.world.model_copy(update={"builder": "unreal.TestRoom"})
    return spec.model_copy(update={"world": world})


@pytest.fixture(scope="module")
def server():
    with UnrealCVServer(room_rescue()) as double:
        yield double


def _backend(server, **args) -> UnrealCVBackend:
    return UnrealCVBackend(camera=CAMERA, port=server.port, **args)


class TestUnrealCVBackend(BackendContract):
    """The unrealcv backend, over loopback to the local UnrealCV double, keeps the contract."""

    landmark = "stretcher"

    @pytest.fixture(autouse=True)
    def _server(self, server):
        self.server = server

    def make_backend(self) -> UnrealCVBackend:
        return _backend(self.server)

    def make_episode(self):
        return _unreal(room_rescue())


def test_reset_places_the_agent_where_the_episode_starts(server):
    """After reset the pose read back through UnrealCV is the episode's start."""
    backend = _backend(server)
    pose = backend.reset(_unreal(room_rescue()), 0).pose
    assert pose.as_list() == pytest.approx([-4.0, -4.0, 0.0, 45.0], abs=1e-3)
    backend.close()


def test_a_step_walks_speed_times_period_along_the_heading(server):
    """A Move at 1 m/s for 0.2 s goes 0.2 m along the 45 degree heading."""
    backend = _backend(server)
    backend.reset(_unreal(room_rescue()), 0)
    outcome = backend.step(Move(turn=0.0, speed=1.0))
    assert (outcome.observation.pose.x + 4.0, outcome.moved) == pytest.approx(
        (0.2 / 2**0.5, 0.2), abs=1e-3
    )
    backend.close()


def test_a_left_turn_turns_the_agent_left(server):
    """A +30 degree turn (sortie's counter-clockwise) reads back as yaw 75."""
    backend = _backend(server)
    backend.reset(_unreal(room_rescue()), 0)
    assert backend.step(Move(turn=30.0)).observation.pose.yaw == pytest.approx(75.0, abs=1e-3)
    backend.close()


def test_walking_into_a_wall_is_a_collision(server):
    """Walking west from next to the room's wall stops and reports a contact."""
    backend = _backend(server)
    spec = _unreal(room_rescue())
    backend.reset(spec.model_copy(update={"start": Pose(-6.6, 0.0, 0.0, 180)}), 0)
    outcomes = [backend.step(Move(speed=1.0)) for _ in range(5)]
    assert backend.collided() and any(e.kind is EventKind.CONTACT for e in outcomes[-1].events)
    backend.close()


def test_depth_arrives_in_metres(server):
    """The depth image (Unreal centimetres on the wire) is within the 14 m room, in metres."""
    backend = _backend(server)
    depth = backend.reset(_unreal(room_rescue()), 0).frames.depth
    assert depth is not None and 0.1 < float(np.median(depth)) < 20.0
    backend.close()


def test_the_casualty_is_carried_when_near(server):
    """Next to the casualty carry_body picks it up; is_carrying confirms it."""
    backend = _backend(server)
    spec = _unreal(room_rescue())
    backend.reset(spec.model_copy(update={"start": Pose(3.0, 3.0, 0.0, 0.0)}), 0)
    event = backend.pick_up("casualty")
    assert (event.kind, backend.holding()) == (EventKind.PICKED_UP, "casualty")
    backend.put_down()
    backend.close()


def test_a_far_casualty_is_not_carried(server):
    """From the start, 10 m away, carry_body fails and nothing is held."""
    backend = _backend(server)
    backend.reset(_unreal(room_rescue()), 0)
    assert backend.pick_up("casualty").kind is EventKind.INTERACTION_FAILED
    assert backend.holding() is None
    backend.close()


def test_an_embedded_world_is_refused():
    """The unrealcv backend refuses a flexible_room world, naming what it loads."""
    assert "loads unreal.<Map> worlds" in (UnrealCVBackend.world_problem("flexible_room") or "")


def test_flight_is_refused_at_construction():
    """A multirotor body is refused: UnrealCV drives the walker only."""
    with pytest.raises(ConfigError, match="only 'walker'"):
        UnrealCVBackend(body="multirotor")


def test_a_refused_connection_names_host_port_and_the_usual_causes():
    """Nothing listening on the port gives one message with host:port and the causes."""
    with socket.socket() as probe:  # bound, not listening: refused, and no one else's port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        backend = UnrealCVBackend(port=port)
        with pytest.raises(BackendError) as caught:
            backend.reset(_unreal(room_rescue()), 0)
    assert str(caught.value) == refused_message("127.0.0.1", port, "connection refused")
    assert f"127.0.0.1:{port}" in str(caught.value) and "root" in str(caught.value)


def _suite_file(path, spec):
    from sortie.core.records_io import SuiteHeader, write_suite

    write_suite(path, SuiteHeader(suite=path.stem), [spec])
    return path


def test_a_rescue_episode_scores_the_same_as_on_the_embedded_backend(tmp_path):
    """The random agent's episode, run through UnrealCV and embedded, has the same metrics.

    Equal to 1e-3: UnrealCV carries locations as text with 0.001 cm, so poses differ by 1e-5 m.
    """
    from sortie.run.batch import RunRequest
    from tests.conftest import run_stored

    spec = room_rescue("e2e/0", budget_s=8.0)
    runs = {}
    with UnrealCVServer(spec) as double:
        for name, episode, args in (
            ("embedded", spec, {}),
            ("unrealcv", _unreal(spec), {"port": str(double.port)}),
        ):
            suite = _suite_file(tmp_path / f"{name}.jsonl", episode)
            request = RunRequest(
                (str(suite),),
                "random",
                store=tmp_path / name / "s.db",  # a store a folder: records go beside it
                run_id="r",
                backend=name,
                backend_args=args,
                seed=3,
            )
            [stored] = run_stored(request)
            runs[name] = stored
    a, b = runs["embedded"], runs["unrealcv"]
    assert (b.outcome, b.steps) == (a.outcome, a.steps) and b.steps > 0
    assert b.metrics == pytest.approx(a.metrics, nan_ok=True, abs=1e-3)


def test_a_configured_binary_is_started_when_nothing_answers(tmp_path):
    """With -b binary=SCRIPT the backend starts it, connects once it listens, stops it on close."""
    import sys

    port = _port_outside_ephemeral()
    script = tmp_path / "fake-ue.sh"
    serve = (
        "import time; from sortie.testing.episodes import room_rescue; "
        "from sortie.testing.unrealcv_server import UnrealCVServer; "
        f"UnrealCVServer(room_rescue(), port={port}); time.sleep(60)"
    )
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{serve}'\n")
    script.chmod(0o755)
    backend = UnrealCVBackend(port=port, binary=str(script), start_timeout=30.0)
    pose = backend.reset(_unreal(room_rescue()), 0).pose
    process = backend._process
    backend.close()
    assert pose.as_list() == pytest.approx([-4.0, -4.0, 0.0, 45.0], abs=1e-3)
    assert process is not None and process.wait(timeout=10) is not None


def _port_outside_ephemeral() -> int:
    """Return a free loopback port below Linux's ephemeral range (32768 up).

    The fake server must bind the port itself, after this probe lets it go. A port another
    process's bind to port 0 could be handed in between comes from the ephemeral range (with
    two test processes, one may); this one is drawn at random from 20000-29999.
    """
    rng = random.Random()
    for _ in range(100):
        port = rng.randrange(20000, 30000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 20000-29999 after 100 tries")
