"""The aerial family (docs/aerial.md): fly to read, find or patrol, and report."""

from __future__ import annotations

from sortie.core.actions import Fly, TaskAction
from sortie.core.episode import EpisodeSpec
from sortie.missions.aerial.settings import AerialSettings
from sortie.missions.aerial.spec import CAMERA, MissionType, aerial_data
from sortie.missions.family import Demo, Family, MapMarks, PaperTable, Score

AERIAL_COLUMNS = ("sr", "osr5", "mp", "eff", "cr", "gap", "steps")
"""The MissionBench table: SR, OSR, MP, Eff, CR, the oracle gap Δ = OSR − SR, steps."""


PATROL_STAGES = {"S1": "patrol", "S2": "done"}
"""A patrol's first stage is flying the route, not reaching a goal."""


def stage_names(spec: EpisodeSpec) -> dict[str, str]:
    """Return the names of an episode's stages: a patrol's first one flies the route."""
    patrol = MissionType.PATROL in aerial_data(spec).types
    return PATROL_STAGES if patrol else {"S1": "reach", "S2": "done"}


def map_marks(spec: EpisodeSpec) -> MapMarks:
    """Return the goal and the patrol route; maps of flights are cropped and show height."""
    data = aerial_data(spec)
    route = tuple((p[0], p[1]) for p in data.patrol)
    return MapMarks(goal=data.goal.position(), route=route, crop=True, altitude=True)


def mission_types(spec: EpisodeSpec) -> list[str]:
    """Return an episode's mission types (its level when it has none), for ``--by type``."""
    return [str(tag) for tag in aerial_data(spec).types] or [spec.level or "-"]


AERIAL = Family(
    name="aerial",
    runtime="sortie.missions.aerial.mission:AerialMission",
    check=aerial_data,
    settings=AerialSettings,
    scorer="sortie.metrics.aerial:score_aerial",
    columns=AERIAL_COLUMNS,
    metrics="sortie.metrics.aerial:METRICS",
    groupings={"type": mission_types},
    tables=(
        PaperTable(
            "MissionBench table: SR, OSR (5 m), MP, Eff, CR (%), Δ = OSR − SR, steps",
            AERIAL_COLUMNS,
        ),
    ),
    body="multirotor",
    needs_interaction=False,
    camera=CAMERA,
    group="type",
    level_name="type",
    headline=("sr", "mp"),
    decay_title="SR and MP (%) per mission type",
    run_scores=(Score("SR", "sr", 0), Score("MP", "mp", 1), Score("Eff", "eff", 1)),
    episode_scores=(Score("SR", "sr", 0), Score("MP", "mp", 1)),
    stage_names={"S1": "reach", "S2": "done"},
    episode_stage_names=stage_names,
    map_marks=map_marks,
    report="sortie.report.aerial:PANELS",
    demo=Demo("aerial-smoke-v1", ("oracle", "heuristic", "random"), "type"),
    env="sortie.missions.aerial.env:AerialEnv",
    actions=(Fly, TaskAction),
    generator="sortie.generation.cli:generate_aerial_suite",
    exports=("demos",),
)
