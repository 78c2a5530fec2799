"""A one-room kitchen for household tests: small enough to build and plan in a blink.

A counter with a red apple and a red mug, a fridge (closed) with a blue mug inside, a table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.agents.household.plans import PlanState, plan
from sortie.core.episode import EpisodeSpec
from sortie.missions.household.records import HouseholdTask, KeyStep, ObjectRole
from sortie.sim.assets.structures import floor_slab, wall
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import box, pose_matrix
from sortie.sim.scene import Dynamics, Scene
from sortie.sim.worlds.base import Param, ParamValue, WorldBuilder

ROOM = {
    "role": "room",
    "room_type": "kitchen",
    "approach_x": 0.0,
    "approach_y": 0.0,
    "approach_yaw": 0.0,
}


def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build the kitchen: 8 x 6 m, walls 2.7 m."""
    kit.add("floor", floor_slab(-4, -3, 4, 3, 0.0, (150, 130, 110)), name="kitchen_0", **ROOM)
    corners = [(-4, -3), (4, -3), (4, 3), (-4, 3)]
    for start, end in zip(corners, corners[1:] + corners[:1], strict=True):
        kit.add("wall", wall(start, end, 0.0, 2.7, (210, 205, 195)))
    furniture = {"role": "receptacle", "room": "kitchen_0", "colour": "white", "material": "wood"}
    kit.add(
        "counter",
        box((0.6, 2.0, 0.9), (3.5, 0, 0.45), (200, 200, 190)),
        name="counter_0",
        kind="counter",
        surface_z=0.9,
        **_surface(3.2, -1.0, 3.8, 1.0),
        approach_x=2.6,
        approach_y=0.0,
        approach_yaw=0.0,
        **furniture,
    )
    kit.add(
        "table",
        box((1.2, 0.8, 0.75), (0, -2.4, 0.375), (120, 80, 45)),
        name="table_0",
        kind="table",
        surface_z=0.75,
        **_surface(-0.6, -2.8, 0.6, -2.0),
        approach_x=0.0,
        approach_y=-1.4,
        approach_yaw=-90.0,
        **furniture,
    )
    kit.add(
        "fridge",
        _hollow((-3.6, 2.0), 0.7, 1.8, 0.6),
        name="fridge_0",
        role="container",
        kind="fridge",
        room="kitchen_0",
        door="fridge_0_door",
        inside_z=0.6,
        **_surface(-3.91, 1.69, -3.29, 2.31),
        colour="white",
        material="metal",
        approach_x=-2.5,
        approach_y=2.0,
        approach_yaw=180.0,
    )
    hinge = pose_matrix((-3.25, 2.35, 0.0), 90.0) @ pose_matrix((3.25, -2.35, 0.0))
    kit.add(
        "fridge",
        box((0.05, 0.7, 1.8), (-3.22, 2.0, 0.9), (210, 210, 215)),
        name="fridge_0_door",
        dynamics=Dynamics.OPENABLE,
        open_transform=hinge,
        role="door_of",
        container="fridge_0",
    )
    _item(kit, "apple_0", "apple", "red", "organic", (3.5, -0.5, 0.9), on="counter_0")
    _item(kit, "mug_0", "mug", "red", "ceramic", (3.5, 0.5, 0.9), on="counter_0")
    _item(kit, "mug_1", "mug", "blue", "ceramic", (-3.6, 2.0, 0.6), inside="fridge_0")
    return kit.scene((-4, -3, 4, 3), "day", topdown_cut=2.5)


def _surface(x0: float, y0: float, x1: float, y1: float) -> dict[str, float]:
    return {"surface_xmin": x0, "surface_ymin": y0, "surface_xmax": x1, "surface_ymax": y1}


def _hollow(centre: tuple[float, float], side: float, height: float, floor: float) -> list:
    """Return a box open at its +x face: back, sides, top and a base up to ``floor``."""
    x, y = centre
    h, t, white = side / 2, 0.04, (230, 230, 235)
    return [
        box((t, side, height), (x - h + t / 2, y, height / 2), white),
        box((side, t, height), (x, y - h + t / 2, height / 2), white),
        box((side, t, height), (x, y + h - t / 2, height / 2), white),
        box((side, side, t), (x, y, height - t / 2), white),
        box((side, side, floor), (x, y, floor / 2), white),
    ]


def _item(
    kit: WorldKit,
    name: str,
    kind: str,
    colour: str,
    material: str,
    base: tuple[float, float, float],
    **where: str,
) -> None:
    x, y, z = base
    kit.add(
        "item",
        box((0.1, 0.1, 0.12), (x, y, z + 0.06), (200, 40, 40)),
        name=name,
        dynamics=Dynamics.PORTABLE,
        role="item",
        kind=kind,
        colour=colour,
        material=material,
        room="kitchen_0",
        **where,
    )


KITCHEN = WorldBuilder(
    "test_kitchen", "a one-room test kitchen", (Param("unused", 0.0, "-", 0.0, 1.0),), build
)

OBJECTS = {
    "apple_0": {"kind": "apple", "role": "item", "names": ["red apple", "apple"]},
    "mug_0": {"kind": "mug", "role": "item", "names": ["red mug", "red cup"]},
    "mug_1": {"kind": "mug", "role": "item", "names": ["blue mug"]},
    "fridge_0": {"kind": "fridge", "role": "container", "names": ["fridge", "refrigerator"]},
    "counter_0": {"kind": "counter", "role": "receptacle", "names": ["counter"]},
    "table_0": {"kind": "table", "role": "receptacle", "names": ["table"]},
}


START = PlanState(
    roles={name: ObjectRole(o["role"]) for name, o in OBJECTS.items()},
    places={
        "apple_0": ("on", "counter_0"),
        "mug_0": ("on", "counter_0"),
        "mug_1": ("inside", "fridge_0"),
    },
    open={"fridge_0": False},
)
"""The kitchen as it starts, for planning the expert's plan of a test task."""


def expert(keypath: list[dict]) -> list[dict]:
    """Return the expert's plan for ``keypath`` from the kitchen's start, ``end`` included."""
    steps = plan(START, [KeyStep.model_validate(step) for step in keypath])
    return [*(s.model_dump(mode="json", exclude_none=True) for s in steps), {"action": "end"}]


def episode(
    keypaths: list[list[dict]], goals: list[dict] | None = None, max_rounds: int = 20
) -> EpisodeSpec:
    """Return a kitchen episode with the given keypaths and goals (the expert plans the first)."""
    task = HouseholdTask.model_validate(
        {
            "instruction": "Tidy up.",
            "attributes": ["short"],
            "objects": OBJECTS,
            "keypaths": keypaths,
            "goals": goals or [],
            "expert": expert(keypaths[0]),
            "max_rounds": max_rounds,
        }
    )
    return EpisodeSpec(
        episode_id="test/kitchen",
        family="household",
        world={"builder": "test_kitchen", "seed": 0},
        start=[0.0, 0.0, 0.0, 0.0],
        mission=task.model_dump(mode="json"),
    )
