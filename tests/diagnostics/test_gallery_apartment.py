"""``sortie view apartment``: the gallery finds a pose inside the apartment and renders it."""

import numpy as np
import pytest
from PIL import Image

from sortie.diagnostics.gallery import raster_picture, save_view, valid_pose
from sortie.sim import raster
from sortie.sim.household import house_layout
from sortie.sim.worlds import build_world

needs_raster = pytest.mark.skipif(not raster.available(), reason="the rasteriser is not built")


def test_default_pose_stands_inside_a_room():
    """The default viewing pose of an apartment stands on the floor inside one of its rooms."""
    scene = build_world("apartment", 4)
    pose = valid_pose(scene, 4)
    rooms = house_layout(scene).rooms
    assert abs(pose.z) < 1e-3
    assert any(
        r.bounds[0] < pose.x < r.bounds[2] and r.bounds[1] < pose.y < r.bounds[3] for r in rooms
    )


def test_view_writes_four_pictures(tmp_path):
    """Viewing an apartment writes rgb, depth, semantic and top-down pictures."""
    written = save_view("apartment", 4, {}, None, 48, tmp_path)
    assert sorted(p.name for p in written) == [
        "depth.png",
        "rgb.png",
        "semantic.png",
        "topdown.png",
    ]
    assert all(p.stat().st_size > 0 for p in written)


@needs_raster
def test_raster_picture_marks_the_cast_pixels_in_red(tmp_path):
    """The right half is the left with the rasteriser's cast pixels painted red, and only those."""
    out = tmp_path / "raster.png"
    cast, total = raster_picture("apartment", 0, 96, out)
    image = np.asarray(Image.open(out))
    assert image.shape == (96, 192, 3) and total == 96 * 96
    left, right = image[:, :96], image[:, 96:]
    changed = np.any(left != right, axis=2)
    assert 0 < changed.sum() <= cast < 0.05 * total  # a pixel already pure red would not change
    assert (right[changed] == (255, 0, 0)).all()
