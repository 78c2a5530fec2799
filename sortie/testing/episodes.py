"""Small hand-made episodes for tests and examples (generated suites are the real data)."""

from __future__ import annotations

from sortie.core.episode import EpisodeSpec, Placement, WorldSpec
from sortie.core.pose import Pose


def room_rescue(
    episode_id: str = "handmade/room-0",
    budget_s: float = 120.0,
    casualty: tuple[float, float] = (4.0, 3.0),
) -> EpisodeSpec:
    """Return a rescue episode in an empty ``flexible_room``: casualty across the room.

    Distances are written by hand, not measured on the navigation graph, so SPL and HS of
    this episode are approximate.
    """
    cx, cy = casualty
    return EpisodeSpec(
        episode_id=episode_id,
        family="rescue",
        level="L1",
        world=WorldSpec(builder="flexible_room", seed=3, params={"size": 14, "clutter": 0.0}),
        start=Pose(-4.0, -4.0, 0.0, 45.0),
        placements=[
            Placement(
                asset="person",
                name="casualty",
                pose=Pose(cx, cy, 0.0, 30.0),
                attributes={"posture": "lying", "top": "jacket", "top_color": "red"},
            ),
            Placement(asset="stretcher", name="stretcher", pose=Pose(-5.5, -2.0, 0.0, 90.0)),
        ],
        targets={"casualty": "casualty", "stretcher": "stretcher"},
        mission={
            "clue_text": "A person in a red jacket lies on the floor.",
            "reference_view": [cx - 3.0, cy - 1.0, 1.6, 18.0, -20.0],
            "budget_s": budget_s,
            "path_distance": 11.4,
            "shortest_length": 22.0,
        },
    )


def aerial_hop(
    types: tuple[str, ...] = ("inspection",), episode_id: str = "handmade/hop-0", **mission: object
) -> EpisodeSpec:
    """Return an aerial episode over ``suburb``: fly 24 m along +x at 20 m, above the roofs.

    The goal pose is ``[24, 0, 20, 0]`` and d_max is 6 m, so four full forward steps reach
    it. ``mission`` overrides or adds mission fields (answer, task_action, patrol, ...).
    """
    data: dict[str, object] = {
        "instruction": "Fly to the goal and inspect it.",
        "types": list(types),
        "goal": [24.0, 0.0, 20.0, 0.0],
        "max_move": 6.0,
        **mission,
    }
    return EpisodeSpec(
        episode_id=episode_id,
        family="aerial",
        level="+".join(types),
        world=WorldSpec(builder="suburb", seed=0),
        start=Pose(0.0, 0.0, 20.0, 0.0),
        mission=data,
    )
