"""The rescue family (docs/rescue.md): find a casualty from clues, carry them back."""

from __future__ import annotations

from sortie.core.actions import Interact, Move
from sortie.missions.family import Demo, Family, Reading
from sortie.missions.rescue.settings import RescueSettings
from sortie.missions.rescue.spec import check_rescue_episode

CODE_SCORES = {"ts": "ts_code", "s1": "s1_code", "s2": "s2_code", "s3": "s3_code", "s4": "s4_code"}
"""The metric each stage-score column reads under ``rescuebench-code``."""
TS_READING = Reading(
    "ts",
    "paper",
    {"paper": {}, "rescuebench-code": CODE_SCORES},
    "stage scores TS and S1–S4: paper (default) or rescuebench-code (docs/rescue.md)",
    seed="rescuebench-code",
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
    readings=(TS_READING,),
)
