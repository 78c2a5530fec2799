"""The aerial family (docs/aerial.md): fly to read, find or patrol, and report."""

from __future__ import annotations

from sortie.core.actions import Fly
from sortie.core.episode import EpisodeSpec
from sortie.missions.aerial.settings import AerialSettings
from sortie.missions.aerial.spec import CAMERA, aerial_data
from sortie.missions.aerial.vocabulary import TaskAction
from sortie.missions.family import Demo, Family, Reading

AERIAL_COLUMNS = ("sr", "osr5", "mp", "eff", "cr", "gap", "steps")
"""The MissionBench table: SR, OSR, MP, Eff, CR, the oracle gap Δ = OSR − SR, steps."""

READINGS = (
    Reading(
        "success",
        "sortie",
        {"sortie": {}, "missionbench": {"sr": "sr_missionbench", "gap": "gap_missionbench"}},
        "sortie: a reporting mission needs its report; missionbench: or the final goal pose "
        "(as does a patrol flown too short for an IoU)",
        seed="missionbench",
    ),
    Reading(
        "mp",
        "sortie",
        {"sortie": {}, "missionbench": {"mp": "mp_missionbench"}},
        "sortie: a degenerate patrol path covers 0; missionbench: distance progress or -1, "
        "and 1 on MissionBench's success",
        seed="missionbench",
    ),
)
"""Where MissionBench's evaluation reads SR and MP otherwise (docs/aerial.md says why)."""


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
    readings=READINGS,
    metrics="sortie.metrics.aerial:METRICS",
    groupings={"type": mission_types},
    body="multirotor",
    needs_interaction=False,
    camera=CAMERA,
    group="type",
    level_name="type",
    demo=Demo("aerial-smoke-v1", ("oracle", "heuristic", "random"), "type"),
    env="sortie.missions.aerial.env:AerialEnv",
    actions=(Fly, TaskAction),
    generator="sortie.generation.aerial_suites:generate_aerial_suite",
    exports=("demos",),
)
