"""Properties every registered world builder must have."""

import numpy as np
import pytest

from sortie.core.errors import ParameterError, UnknownNameError
from sortie.sim.camera import CameraSpec
from sortie.sim.render import Renderer
from sortie.sim.semantics import CLASS_IDS
from sortie.sim.worlds import WORLDS, build_world

ALL_WORLDS = WORLDS.names()


@pytest.mark.parametrize("name", ALL_WORLDS)
def test_same_seed_same_world_bit_for_bit(name):
    """Building a world twice from one seed gives the same digest; another seed differs."""
    first, again = build_world(name, 11), build_world(name, 11)
    assert first.digest() == again.digest()
    assert build_world(name, 12).digest() != first.digest()


@pytest.mark.parametrize("name", ALL_WORLDS)
def test_same_seed_same_pixels(name):
    """Two builds of one world render identical images from the same pose."""
    spec = CameraSpec(48, 48, 90.0)
    images = [Renderer(build_world(name, 5)).render(spec, (0.5, 0.5, 1.6), 30.0) for _ in range(2)]
    for a, b in zip(
        [images[0].rgb, images[0].depth, images[0].semantic],
        [images[1].rgb, images[1].depth, images[1].semantic],
        strict=True,
    ):
        assert np.array_equal(a, b)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ALL_WORLDS)
def test_objects_use_known_classes_and_stand_inside_the_bounds(name):
    """Every object has a known class; all but ground cover stand inside the world's bounds.

    Ground, grass and roads may run past the bounds as scenery up to the horizon.
    """
    scene = build_world(name, 0)
    xmin, ymin, xmax, ymax = scene.bounds
    for obj in scene.objects:
        assert obj.semantic in CLASS_IDS
        if obj.semantic in {"ground", "grass", "road", "sidewalk", "water"}:
            continue
        x, y, _ = obj.center()
        assert xmin - 0.5 <= x <= xmax + 0.5 and ymin - 0.5 <= y <= ymax + 0.5, obj.name


def test_unknown_builder_suggests_a_name():
    """A misspelt builder name gets a suggestion and the list of builders."""
    with pytest.raises(UnknownNameError, match=r"Did you mean 'flexible_room'\?"):
        build_world("flexible_rom", 0)


def test_unknown_parameter_suggests_a_name():
    """A misspelt parameter gets a suggestion and the list of parameters."""
    with pytest.raises(UnknownNameError, match=r"unknown parameter 'sise'. Did you mean 'size'"):
        build_world("flexible_room", 0, {"sise": 10})


def test_out_of_range_parameter_names_the_range():
    """A parameter out of range says the allowed range."""
    with pytest.raises(ParameterError, match=r"size=2 is outside the allowed range 8..40"):
        build_world("flexible_room", 0, {"size": 2})


def test_bad_choice_lists_the_choices():
    """A lighting preset that does not exist lists the presets."""
    with pytest.raises(ParameterError, match="day, overcast, dusk, night"):
        build_world("flexible_room", 0, {"lighting": "noon"})
