import numpy as np
import pytest

from sortie.backends import BACKENDS, SupportsInteraction, SupportsOracleView
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import FlightPrimitive, Fly, Move
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import ConfigError, InvalidPoseError
from sortie.core.observation import EventKind
from sortie.core.pose import Pose
from sortie.sim.camera import CameraSpec
from sortie.sim.worlds import WORLDS, WorldBuilder
from sortie.testing import BackendContract

FACING_DOOR = Pose(0.0, 0.0, 0.0, -90.0)


def _room(start: Pose = FACING_DOOR, size: float = 14.0) -> EpisodeSpec:
    return EpisodeSpec(
        episode_id="t/0",
        family="rescue",
        start=start,
        world=WorldSpec(builder="flexible_room", seed=3, params={"size": size, "clutter": 0.0}),
    )


class TestEmbeddedWalker(BackendContract):
    """The embedded backend with a walker honours the backend contract."""

    landmark = "door_0"

    def make_backend(self) -> EmbeddedBackend:
        return EmbeddedBackend(body="walker", camera=CameraSpec(32, 32, 90.0))

    def make_episode(self) -> EpisodeSpec:
        return _room()


class TestEmbeddedMultirotor(BackendContract):
    """The embedded backend with a multirotor honours the backend contract."""

    landmark = "door_0"

    def make_backend(self) -> EmbeddedBackend:
        return EmbeddedBackend(body="multirotor", camera=CameraSpec(32, 32, 90.0, -45.0))

    def make_episode(self) -> EpisodeSpec:
        return _room(Pose(0.0, 0.0, 1.5, 0.0))

    def forward(self) -> Fly:
        return Fly(FlightPrimitive.FORWARD, 1.0)


def test_registered_and_exposes_optional_powers():
    """'embedded' resolves through the registry and offers interaction and an oracle view."""
    backend = BACKENDS.get("embedded")()
    assert isinstance(backend, SupportsInteraction) and isinstance(backend, SupportsOracleView)


def test_walking_into_the_wall_reports_a_contact():
    """Walking at the wall for a few seconds ends in a contact event and collided()."""
    backend = EmbeddedBackend(sensors=())
    backend.reset(_room(Pose(0.0, 3.0, 0.0, 90.0), size=8.0), 0)
    kinds = set()
    for _ in range(20):
        kinds |= {e.kind for e in backend.step(Move(speed=1.5)).events}
    assert EventKind.CONTACT in kinds and backend.collided()
    assert backend.pose().y <= 4.0 - 0.1 - 0.3 + 0.01


def test_opening_the_door_through_the_backend_changes_door_state_and_view():
    """set_door opens the door: door_state says so and the door's pixels move."""
    backend = EmbeddedBackend(camera=CameraSpec(64, 64, 90.0))
    first = backend.reset(_room(), 0)
    door_id = backend._require_world().scene.id_of("door_0")  # noqa: SLF001
    assert first.frames.semantic is not None
    before = int((first.frames.semantic == door_id).sum())
    event = backend.set_door("door_0", True)
    assert event.kind is EventKind.DOOR_OPENED and backend.door_state("door_0")
    after = backend.step(Move()).observation.frames.semantic
    assert after is not None and int((after == door_id).sum()) != before


def test_an_agent_with_no_sensors_gets_no_images():
    """With sensors=() the observation carries no frames at all."""
    backend = EmbeddedBackend(sensors=())
    frames = backend.reset(_room(), 0).frames
    assert frames.rgb is None and frames.depth is None and frames.semantic is None


def test_wrong_action_for_the_body_is_a_clear_error():
    """A walker given a Fly action raises, naming what it accepts."""
    backend = EmbeddedBackend(sensors=())
    backend.reset(_room(), 0)
    with pytest.raises(ConfigError, match="walker cannot take Fly; allowed: Move"):
        backend.step(Fly(FlightPrimitive.UP, 1.0))


def test_start_inside_a_wall_is_refused():
    """An episode whose start is inside the wall fails at reset with InvalidPoseError."""
    with pytest.raises(InvalidPoseError):
        EmbeddedBackend(sensors=()).reset(_room(Pose(7.0, 0.0, 0.0, 0.0)), 0)


@pytest.mark.parametrize("start", [Pose(7.0, 0.0, 0.0, 0.0), Pose(0.0, 0.0, 5.0, 0.0)])
def test_a_start_in_a_wall_or_in_the_air_is_bad_input_naming_the_episode(start):
    """It is a ConfigError (a run stops on it) with the episode id and sortie view's words."""
    with pytest.raises(ConfigError, match=r"episode .*: start: walker at Pose.*: ") as caught:
        EmbeddedBackend(sensors=()).reset(_room(start), 0)
    assert "inside" in str(caught.value) or "no ground" in str(caught.value)


def test_oracle_view_gives_positions_and_paths():
    """The oracle view knows where the door is and a walkable path to near it."""
    backend = EmbeddedBackend(sensors=())
    backend.reset(_room(), 0)
    oracle = backend.oracle_view()
    x, y, _ = oracle.position_of("door_0")
    goal = (x, y + 1.0, 0.0)
    path = oracle.shortest_path((0.0, 0.0, 0.0), goal)
    assert path and np.hypot(path[-1][0] - goal[0], path[-1][1] - goal[1]) < 0.5
    assert oracle.geodesic_distance((0.0, 0.0, 0.0), goal) >= np.hypot(x, y + 1.0) - 0.3


def _base_now(backend: EmbeddedBackend, name: str) -> tuple[float, float, float]:
    """Return object ``name``'s base centre worked out afresh from its meshes where they are."""
    scene = backend._require_world().scene  # noqa: SLF001
    parts = scene.current_parts(scene[name])
    low = np.min([p.bounds()[0] for p in parts], axis=0)
    high = np.max([p.bounds()[1] for p in parts], axis=0)
    return (float(low[0] + high[0]) / 2, float(low[1] + high[1]) / 2, float(low[2]))


def test_a_door_s_position_follows_its_own_opening_and_the_reset():
    """position_of a door is kept per door state: opened it moves, reset it is back."""
    backend = EmbeddedBackend(sensors=())
    backend.reset(_room(), 0)
    shut = backend.position_of("door_0")
    backend.set_door("door_0", True)
    opened = backend.position_of("door_0")
    assert opened != shut and opened == _base_now(backend, "door_0")
    backend.reset(_room(), 0)
    assert backend.position_of("door_0") == shut == _base_now(backend, "door_0")


def _casualty_room(kit, rng, params):
    """A small room with a lying person 3 m ahead of the origin."""
    from sortie.sim.assets.people import add_person
    from sortie.sim.worlds import flexible_room

    scene = flexible_room.build(kit, rng, params)
    add_person(kit, rng, (3.0, 0.0, 0.0), posture="lying", name="casualty")
    return kit.scene(scene.bounds, "day", scene.topdown_cut)


if "test_casualty_room" not in WORLDS:
    WORLDS.add(
        "test_casualty_room",
        WorldBuilder(
            "test_casualty_room", "test room", WORLDS.get("flexible_room").params, _casualty_room
        ),
    )


def test_picked_up_body_travels_with_the_walker_and_is_put_down_in_front():
    """A carried casualty is hidden, stays at distance 0, and lands 0.8 m ahead when dropped."""
    backend = EmbeddedBackend(camera=CameraSpec(32, 32, 90.0))
    spec = _room(Pose(0.0, 0.0, 0.0, 0.0)).model_copy(
        update={"world": WorldSpec(builder="test_casualty_room", seed=1, params={"clutter": 0.0})}
    )
    backend.reset(spec, 0)
    assert backend.visible("casualty") and backend.distance_to("casualty") == pytest.approx(
        3.0, abs=0.05
    )
    assert backend.pick_up("casualty").kind is EventKind.PICKED_UP
    backend.step(Move(turn=90.0, speed=1.0))
    assert backend.holding() == "casualty" and backend.distance_to("casualty") == 0.0
    assert not backend.visible("casualty")
    assert backend.put_down().kind is EventKind.DROPPED and backend.holding() is None
    assert backend.distance_to("casualty") == pytest.approx(0.8, abs=0.05)
    backend.step(Move(pitch=-60.0))
    assert backend.visible("casualty")
