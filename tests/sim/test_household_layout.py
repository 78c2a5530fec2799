"""Reading the household structure of a scene, and finding where to put an item down."""

import math

import pytest

from sortie.core.errors import ConfigError
from sortie.sim.household import house_layout, item_base, item_radius, place_spots, resting_on
from sortie.sim.mesh import pose_matrix
from sortie.sim.scene import Scene, SceneObject
from sortie.sim.worlds import build_world


@pytest.fixture(scope="module")
def scene() -> Scene:
    """One apartment, built once."""
    return build_world("apartment", 2)


def _changed(scene: Scene, name: str, drop: str | None = None, **values) -> Scene:
    """Return a copy of ``scene`` with object ``name``'s attributes changed."""
    objects = []
    for obj in scene.objects:
        if obj.name == name:
            attributes = {k: v for k, v in obj.attributes.items() if k != drop}
            attributes.update(values)
            obj = SceneObject(
                obj.name,
                obj.semantic,
                obj.parts,
                attributes,
                obj.dynamics,
                obj.open_transform,
                obj.starts_open,
            )
        objects.append(obj)
    return Scene(objects, scene.bounds, origin="changed")


def test_layout_lists_every_room_piece_and_item(scene):
    """The layout has one room per floor (sills aside) and every object with a household role."""
    layout = house_layout(scene)
    floors = {o.name for o in scene.of_class("floor") if not o.name.startswith("sill_")}
    assert {r.name for r in layout.rooms} == floors
    roles = [o.attributes.get("role") for o in scene.objects]
    assert len(layout.furniture) == roles.count("receptacle") + roles.count("container")
    assert len(layout.items) == roles.count("item") > 10


def test_a_missing_attribute_names_the_object_and_attribute(scene):
    """A receptacle without ``surface_z`` is refused, naming both."""
    piece = next(p for p in house_layout(scene).furniture if p.role == "receptacle")
    broken = _changed(scene, piece.name, drop="surface_z")
    with pytest.raises(ConfigError, match=rf"object '{piece.name}': attribute 'surface_z'"):
        house_layout(broken)


def test_an_item_on_something_unknown_is_refused(scene):
    """An item whose ``on`` names no receptacle is refused, naming the item and the name."""
    item = next(i for i in house_layout(scene).items if i.on)
    broken = _changed(scene, item.name, on="nowhere_0")
    with pytest.raises(ConfigError, match=rf"'{item.name}': attribute 'on' names 'nowhere_0'"):
        house_layout(broken)


def test_an_item_both_on_and_inside_is_refused(scene):
    """An item with both ``on`` and ``inside`` is refused."""
    item = next(i for i in house_layout(scene).items if i.on)
    broken = _changed(scene, item.name, inside="fridge_0")
    with pytest.raises(ConfigError, match="exactly one of the attributes 'on' or 'inside'"):
        house_layout(broken)


def test_a_room_with_a_text_approach_is_refused(scene):
    """A room whose ``approach_x`` is not a number is refused."""
    room = house_layout(scene).rooms[0]
    broken = _changed(scene, room.name, approach_x="middle")
    with pytest.raises(ConfigError, match=r"attribute 'approach_x' must be a finite number"):
        house_layout(broken)


def _host_with_items(scene):
    layout = house_layout(scene)
    return layout, next(p for p in layout.furniture if resting_on(scene, layout, p.name))


def test_place_spots_are_apart_on_the_surface_and_at_its_height(scene):
    """Spots are distinct, 2 radii apart, inside the surface and footprint, at surface_z."""
    layout = house_layout(scene)
    counter = max(layout.furniture, key=lambda p: p.surface[2] - p.surface[0])
    spots = place_spots(scene, layout, counter.name, 4, radius=0.08, avoid=())
    assert len(spots) == 4
    for i, (x, y, z) in enumerate(spots):
        assert z == counter.surface_z
        s0, t0, s1, t1 = counter.surface
        assert s0 + 0.08 <= x <= s1 - 0.08 and t0 + 0.08 <= y <= t1 - 0.08
        f0, g0, f1, g1 = counter.footprint
        assert f0 <= x <= f1 and g0 <= y <= g1
        for u, v, _ in spots[i + 1 :]:
            assert math.hypot(x - u, y - v) >= 0.16


def test_place_spots_keep_clear_of_items_resting_there(scene):
    """By default, spots keep clear of the items already on the surface."""
    layout, piece = _host_with_items(scene)
    spots = place_spots(scene, layout, piece.name, 3, radius=0.05)
    for name in resting_on(scene, layout, piece.name):
        low, high = scene[name].bounds()
        cx, cy = (low[:2] + high[:2]) / 2
        radius = math.hypot(*(high[:2] - low[:2])) / 2
        for x, y, _ in spots:
            assert math.hypot(x - cx, y - cy) >= radius + 0.05


def test_a_hidden_item_no_longer_takes_its_place(scene):
    """An item being carried (hidden) is not resting on its surface any more."""
    layout, piece = _host_with_items(scene)
    name = resting_on(scene, layout, piece.name)[0]
    scene.set_hidden(name, True)
    try:
        assert name not in resting_on(scene, layout, piece.name)
    finally:
        scene.reset_state()


def test_place_spots_are_deterministic_and_stop_when_full(scene):
    """The same call gives the same spots; a full surface gives fewer than asked."""
    layout = house_layout(scene)
    piece = min(
        layout.furniture,
        key=lambda p: (p.surface[2] - p.surface[0]) * (p.surface[3] - p.surface[1]),
    )
    first = place_spots(scene, layout, piece.name, 50, radius=0.1, avoid=())
    assert first == place_spots(scene, layout, piece.name, 50, radius=0.1, avoid=())
    assert 0 < len(first) < 50


def test_place_spots_on_unknown_furniture_names_the_known(scene):
    """An unknown furniture name is refused with the list of furniture."""
    with pytest.raises(ConfigError, match="no receptacle or container named 'moon_0'"):
        place_spots(scene, house_layout(scene), "moon_0", 1)


def test_an_item_moved_to_a_spot_rests_there(scene):
    """Translating an item by spot minus ``item_base`` puts its base on the new surface."""
    layout = house_layout(scene)
    item = layout.items[0]
    others = [p for p in layout.furniture if p.name != item.host and p.role == "receptacle"]
    target = max(others, key=lambda p: p.surface[2] - p.surface[0])
    spot = place_spots(scene, layout, target.name, 1, radius=item_radius(scene, item.name))[0]
    base = item_base(scene, item.name)
    assert base is not None
    scene.set_transform(
        item.name, pose_matrix(tuple(s - b for s, b in zip(spot, base, strict=True)))
    )
    try:
        assert item.name in resting_on(scene, layout, target.name)
        moved = item_base(scene, item.name)
        assert (
            moved is not None and max(abs(m - s) for m, s in zip(moved, spot, strict=True)) < 1e-3
        )
    finally:
        scene.reset_state()
