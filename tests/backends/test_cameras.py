import json

import pytest
from PIL import Image

from sortie.backends import BACKENDS
from sortie.backends.cameras import PRESETS, parse_camera, run_camera
from sortie.backends.catalog import Capabilities, Needs, refusal
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ParameterError
from sortie.missions.registry import FAMILIES
from sortie.report.runs import run_table
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store


class OwnCamera(EmbeddedBackend):
    """An embedded backend declaring it renders only the simulator's own camera."""

    capabilities = Capabilities(
        frozenset({"walker"}), True, frozenset({"rgb", "depth", "semantic"}), "any"
    )


def test_a_preset_gives_its_seeds_camera():
    """The rescuebench preset is RescueBench's agent camera: 640x640 pixels at 110 degrees."""
    assert parse_camera("rescuebench") == {"width": 640, "height": 640, "hfov": 110.0}


def test_text_gives_size_field_of_view_and_pitch():
    """640x360@110/-10 reads as its four fields."""
    assert parse_camera("640x360@110/-10") == {
        "width": 640,
        "height": 360,
        "hfov": 110.0,
        "pitch": -10.0,
    }


def test_what_the_camera_does_not_give_keeps_the_familys():
    """A bare size on an aerial run keeps MissionBench's 90 degrees and 45 degrees down."""
    camera = FAMILIES.get("aerial").own_camera("640x480")
    assert camera == {"width": 640, "height": 480, "hfov": 90.0, "pitch": -45.0}


def test_a_family_without_a_fixed_camera_takes_its_bodys_pitch():
    """The household robot's head looks 20 degrees down unless the camera says otherwise."""
    assert FAMILIES.get("household").own_camera("rescuebench")["pitch"] == -20.0


def test_every_preset_is_a_camera_the_simulator_accepts():
    """Each preset builds a camera within the documented ranges."""
    for name in PRESETS:
        assert run_camera(name, {"pitch": 0.0})["width"] >= 8


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("0x5", "size 0x5 outside the allowed 8..4096"),
        ("640x640@180", "hfov 180.0 outside the allowed 10..170"),
        ("8192x8192", "size 8192x8192 outside the allowed 8..4096"),
        ("640x640/-95", "pitch -95.0 outside the allowed -90..90"),
        ("fisheye", "'fisheye' is not a preset or WIDTHxHEIGHT"),
    ],
)
def test_an_impossible_camera_is_refused_in_one_line(text, found):
    """A zero size, a field of view of 180 degrees, too many pixels or no camera at all."""
    with pytest.raises(ParameterError, match="^--camera: ") as refused:
        run_camera(text, {"pitch": 0.0})
    assert found in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_backend_with_its_own_camera_refuses_a_runs_camera():
    """A backend that cannot set its camera says so, naming the camera asked for."""
    camera = run_camera("rocket2", {"pitch": 0.0})
    needs = Needs("rescue", "walker", True, frozenset({"rgb"}), frozenset(), camera)
    with BACKENDS.override("own-camera", OwnCamera):
        reason = refusal("own-camera", needs)
    assert reason is not None
    assert "640x360@110/0" in reason
    assert "simulator's camera" in reason


def test_a_runs_camera_is_stored_recorded_listed_and_rendered(tmp_path):
    """The run's camera is in the config, the header and the listing; frames have its size."""
    request = RunRequest(
        ("rescue-smoke-v2",),
        "explorer",
        store=tmp_path / "s.db",
        limit=1,
        camera="64x48@110",
        record_frames=True,
        run_id="cam",
    )
    with Store(request.store) as store:
        plan = plan_run(request, store)
        execute(plan, request, store)
        config = store.run_config("cam")
        (stored,) = store.episodes("cam")
        (listed,) = run_table(store)
    asked = {"width": 64, "height": 48, "hfov": 110.0, "pitch": 0.0}
    assert config.backend.args["camera"] == asked
    header = json.loads(stored.record.read_text().splitlines()[0])
    assert header["backend"]["args"]["camera"] == asked
    assert listed["backend"] == "embedded camera=64x48@110/0"
    frame = next((tmp_path / "frames").rglob("*.png"))
    with Image.open(frame) as picture:
        assert picture.size == (64, 48)


class _SmallMessages:
    """A test agent whose images reach it in messages of at most 3,000 pixels."""

    sensors = frozenset({"rgb", "depth"})
    message_pixels = 3000

    def reset(self, brief, seed):
        """Accept the episode."""

    def act(self, observation):
        """Never asked: the run is refused first."""


def test_a_camera_too_large_for_an_agents_messages_is_refused_before_the_run():
    """Two 48x48 images (4,608 pixels) cannot reach an agent of 3,000-pixel messages."""
    from sortie.agents.base import AGENTS
    from sortie.run.jobs import RunSpec

    with AGENTS.override("small", _SmallMessages):
        RunSpec.resolve("small", {}, family="rescue", camera="32x32")  # 2,048: fits
        with pytest.raises(ParameterError, match="at most 3,000 pixels; 2 images of 48x48"):
            RunSpec.resolve("small", {}, family="rescue", camera="48x48")


def test_a_run_refused_when_its_first_episode_starts_leaves_no_run_behind(tmp_path):
    """The explorer refuses a pitched camera at its first reset; the store keeps no empty run."""
    from sortie.core.errors import ConfigError

    request = RunRequest(
        ("rescue-smoke-v2",), "explorer", store=tmp_path / "s.db", limit=1, camera="64x64/-30"
    )
    with Store(request.store) as store:
        plan = plan_run(request, store)
        with pytest.raises(ConfigError, match="pitched -30°"):
            execute(plan, request, store)
        assert store.runs() == []
