"""The explorer baseline: map, odometry, memory, and whole episodes in the hand-made room."""

from __future__ import annotations

import numpy as np
import pytest

from sortie.agents.base import AGENTS
from sortie.agents.explorer import ExplorerAgent, NoMemoryExplorer
from sortie.agents.explorer.occupancy import ElevationMap
from sortie.agents.explorer.odometry import Odometry
from sortie.agents.explorer.perception import (
    back_project,
    clue_colours,
    colour_names,
    kind_table,
    ray_slopes,
)
from sortie.core.actions import Move
from sortie.core.observation import Brief, Frames, MissionObservation
from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
from sortie.run.suite import RunSettings, run_suite
from sortie.testing.episodes import room_rescue

STRETCHER_ID = 7


def wall_depth(distance: float = 3.0, size: int = 64, eye: float = 1.6) -> np.ndarray:
    """Return the planar depth of flat floor with a 3 m-high wall ``distance`` m ahead."""
    _, up = ray_slopes(size, size, 90.0)
    floor = np.where(up < 0, eye / np.maximum(-up, 1e-9), np.inf)
    wall_z = eye + distance * up
    wall = np.where((wall_z >= 0) & (wall_z <= 3.0), distance, np.inf)
    return np.minimum(floor, wall).astype(np.float32)


def observation(
    depth: np.ndarray, semantic: np.ndarray | None = None, carrying: bool = False
) -> MissionObservation:
    """Return an observation holding a depth image (and instance ids, zero by default)."""
    ids = np.zeros(depth.shape, np.int32) if semantic is None else semantic
    rgb = np.zeros((*depth.shape, 3), np.uint8)
    return MissionObservation(Frames(rgb, depth, ids), carrying)


def test_map_marks_wall_occupied_and_floor_before_it_free() -> None:
    """A wall seen in depth is occupied; the floor between the body and the wall is walkable."""
    grid = ElevationMap(cell=0.25, size=128)
    depth = wall_depth(3.0)
    points = back_project(
        depth, np.zeros(depth.shape, np.int32), kind_table({}), Odometry(), eye=1.6, hfov=90.0
    )
    grid.add(points, feet=0.0)
    win = grid.window(margin=2)
    blocked, walkable = grid.obstacles(win), grid.walkable(win, clearance=0)
    wall, floor = grid.index(3.1, 0.0), grid.index(2.2, 0.0)
    rel = lambda rc: (rc[0] - win[0].start, rc[1] - win[1].start)  # noqa: E731
    assert blocked[rel(wall)]
    assert walkable[rel(floor)] and not blocked[rel(floor)]


def test_dead_reckoning_follows_commanded_moves() -> None:
    """Turns and strides add up; a blocked step keeps its turn but not its translation."""
    pose = Odometry()
    pose.advance(30.0, 1.5, 0.2, blocked=False)
    pose.advance(30.0, 1.5, 0.2, blocked=False)
    pose.advance(30.0, 1.0, 0.2, blocked=True)
    assert pose.yaw == pytest.approx(90.0)
    assert (pose.x, pose.y) == pytest.approx(
        (0.3 * (np.cos(np.pi / 6) + 0.5), 0.3 * (0.5 + np.cos(np.pi / 6)))
    )


def test_agent_odometry_applies_its_last_move() -> None:
    """The agent advances its estimate by the Move it sent, once per observation."""
    agent = ExplorerAgent()
    agent.reset(Brief("rescue", "L1", "", control_period=0.2), seed=0)
    empty = observation(np.full((32, 32), np.inf, np.float32))
    agent._scan = 0  # noqa: SLF001 - skip the opening look-around for this check
    agent._last = Move(0.0, 1.5)  # noqa: SLF001
    agent.act(empty)
    assert (agent.pose.x, agent.pose.y) == pytest.approx((0.3, 0.0))


def test_no_memory_variant_forgets_on_pick_up() -> None:
    """Without memory, the map and the stretcher's place are dropped when the casualty is held."""
    agent = NoMemoryExplorer()
    brief = Brief("rescue", "L1", "", semantic_classes={STRETCHER_ID: "stretcher"})
    agent.reset(brief, seed=0)
    depth = wall_depth(3.0, size=32)
    ids = np.where(np.isfinite(depth) & (depth == 3.0), STRETCHER_ID, 0).astype(np.int32)
    agent.act(observation(depth, ids))
    assert agent.recall.stretcher is not None and np.isfinite(agent.map.high).any()
    agent.act(observation(np.full((32, 32), np.inf, np.float32), carrying=True))
    assert agent.recall.stretcher is None and agent.recall.home is None
    assert not np.isfinite(agent.map.high).any()


def test_memory_variant_keeps_map_on_pick_up() -> None:
    """With memory, the pick-up changes nothing the agent knows."""
    agent = ExplorerAgent()
    agent.reset(Brief("rescue", "L1", ""), seed=0)
    agent.act(observation(wall_depth(3.0, size=32)))
    agent.act(observation(np.full((32, 32), np.inf, np.float32), carrying=True))
    assert np.isfinite(agent.map.high).any() and agent.recall.home is not None


def test_clue_colours_name_clothes_as_the_clue_does() -> None:
    """Clue words are found, and saturated clothing colours get those names even in shade."""
    assert clue_colours("A person in a red jacket and grey jeans.") == ("red", "grey")
    rgb = np.array([[196, 32, 32], [118, 20, 20], [36, 72, 184], [44, 146, 56]], np.uint8)
    assert list(colour_names(rgb)) == ["red", "red", "blue", "green"]


def test_registered_names() -> None:
    """Both variants are registered agents."""
    assert AGENTS.get("explorer") is ExplorerAgent
    assert AGENTS.get("explorer-nomem") is NoMemoryExplorer


@pytest.fixture(scope="module")
def room_runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    """Run the hand-made room episode twice with the same seed."""
    suite = Suite(SuiteHeader(suite="room"), [room_rescue()])
    return [
        run_suite(suite, "explorer", {}, RunSettings(out=tmp_path_factory.mktemp(f"r{i}")))[0]
        for i in range(2)
    ]


def test_explorer_completes_the_room_episode(room_runs: list) -> None:
    """Under assisted triggers the explorer rescues the casualty within the budget."""
    result = room_runs[0]
    assert result.footer.outcome == "success"
    assert result.metrics["tcr"] == 1.0


def test_explorer_is_deterministic(room_runs: list) -> None:
    """The same episode and seed give the same actions."""
    actions = [[s.action for s in read_trajectory(r.path).steps] for r in room_runs]
    assert actions[0] == actions[1]


def test_the_explorer_reads_depth_with_the_briefs_camera():
    """A run's 110° camera (--camera rescuebench) is the one its depth is mapped with."""
    from sortie.agents.explorer.agent import ExplorerAgent
    from sortie.core.observation import Brief, CameraInfo

    agent = ExplorerAgent(hfov=90.0)
    agent.reset(Brief("rescue", "L1", "", camera=CameraInfo(640, 640, 110.0, 0.0)), 0)
    assert agent.hfov == 110.0
    agent.reset(Brief("rescue", "L1", ""), 0)  # a brief that does not say: the argument
    assert agent.hfov == 90.0


def test_the_explorer_refuses_a_pitched_camera():
    """Its map needs a level camera; a pitched one is said in one line, not mapped wrongly."""
    from sortie.agents.explorer.agent import ExplorerAgent
    from sortie.core.errors import ConfigError
    from sortie.core.observation import Brief, CameraInfo

    with pytest.raises(ConfigError, match="pitched -45°"):
        ExplorerAgent().reset(Brief("rescue", "L1", "", camera=CameraInfo(64, 64, 90.0, -45.0)), 0)
