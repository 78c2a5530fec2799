"""The rescue family (docs/rescue.md): find a casualty from clues, carry them back."""

from __future__ import annotations

from sortie.core.actions import Interact, Move
from sortie.missions.family import Demo, Family, Reading
from sortie.missions.rescue.settings import RescueSettings
from sortie.missions.rescue.spec import check_rescue_episode

STAGE_COLUMNS = ("ts", "s1", "s2", "s3", "s4")
"""The columns the ``ts`` reading fills, each variant from its own stored metrics."""


def _stage_columns(suffix: str) -> dict[str, str]:
    """Return the metric each stage-score column reads in one variant (``ts`` -> ``ts_code``)."""
    return {column: f"{column}{suffix}" for column in STAGE_COLUMNS}


TS_READING = Reading(
    "ts",
    "paper",
    {
        "paper": {},
        "rescuebench-code": _stage_columns("_code"),
        "rescuebench-code-placement": _stage_columns("_code_placement"),
        "paper-fork": _stage_columns("_fork"),
    },
    "stage scores TS and S1–S4: paper (default), rescuebench-code, the same measured to "
    "RescueBench's target points (rescuebench-code-placement), or paper-fork (docs/rescue.md)",
    seed="rescuebench-code-placement",
)
SDTW_READING = Reading(
    "sdtw",
    "sortie",
    {"sortie": {}, "r4r": {"sdtw": "sdtw_r4r"}},
    "sortie: nDTW if the task succeeded; r4r: nDTW if the path ends within 3 m of the "
    "expert's end (docs/rescue.md)",
    seed="r4r",
)


RESCUE = Family(
    name="rescue",
    runtime="sortie.missions.rescue.mission:RescueMission",
    check=check_rescue_episode,
    settings=RescueSettings,
    scorer="sortie.metrics.rescue:score_rescue",
    columns=("tcr", "ts", "s1", "s2", "s3", "s4", "steps", "collisions", "hs"),
    metrics="sortie.metrics.rescue:METRICS",
    body="walker",
    group="level",
    demo=Demo("rescue-smoke-v2", ("oracle", "explorer", "random"), "level"),
    env="sortie.missions.rescue.env:RescueEnv",
    actions=(Move, Interact),
    generator="sortie.generation.rescue:generate_rescue_suite",
    exports=("demos",),
    readings=(TS_READING, SDTW_READING),
)
