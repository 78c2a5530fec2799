"""``sortie view apartment``: the gallery finds a pose inside the apartment and renders it."""

from sortie.diagnostics.gallery import save_view, valid_pose
from sortie.sim.household import house_layout
from sortie.sim.worlds import build_world


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
