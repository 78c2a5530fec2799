"""The household family (docs/household.md): a planner and skills carry out a chore."""

from __future__ import annotations

from sortie.core.episode import EpisodeSpec
from sortie.missions.family import Demo, Family, Reading
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.spec import household_task
from sortie.missions.household.vocabulary import Subtask

HOUSEHOLD_COLUMNS = ("sr", "tp", "ser", "srr", "plwsr", "gc")
"""The EMMOE table: SR, TP, SER, SRR, PLWSR, GC."""


READINGS = (
    Reading(
        "tp",
        "sortie",
        {
            "sortie": {},
            "emmoe": {"tp": "tp_emmoe", "tp_category": "tp_emmoe_category"},
        },
        "sortie: end is not a keypath step (m/n); emmoe: end is one more step (m/(n+1))",
        seed="emmoe",
    ),
    Reading(
        "srr",
        "sortie",
        {
            "sortie": {},
            "emmoe": {"srr": "srr_emmoe", "srr_category": "srr_emmoe_category"},
        },
        "sortie: every failed subtask; emmoe: only those the planner planned again after",
        seed="emmoe",
    ),
    Reading(
        "match",
        "instance",
        {
            "instance": {},
            "category": {
                "tp": "tp_category",
                "tp_emmoe": "tp_emmoe_category",
                "sr": "sr_category",
                "ser": "ser_category",
                "srr": "srr_category",
                "srr_emmoe": "srr_emmoe_category",
                "plwsr": "plwsr_category",
            },
        },
        "instance: a round matches a keypath step on the step's own thing; category: on any "
        "thing of its kind, as EMMOE's names map to kinds (TP, SR, SER, SRR, PLWSR)",
        seed="category",
    ),
)
"""Where EMMOE's notebooks read TP, SRR and the matching of names otherwise (docs/household.md
says why). A variant maps the metric a column reads so far, so readings compose in any order:
``tp=emmoe`` with ``match=category`` reads ``tp_emmoe_category``."""


def attributes(spec: EpisodeSpec) -> list[str]:
    """Return a task's attributes, each once (``--by attribute``)."""
    return list(dict.fromkeys(a.value for a in household_task(spec).attributes))


def split(spec: EpisodeSpec) -> list[str]:
    """Return a task's split (``--by split``)."""
    return [household_task(spec).split.value]


HOUSEHOLD = Family(
    name="household",
    runtime="sortie.missions.household.mission:HouseholdMission",
    check=household_task,
    settings=HouseholdSettings,
    scorer="sortie.metrics.household:score_household",
    columns=HOUSEHOLD_COLUMNS,
    metrics="sortie.metrics.household:METRICS",
    groupings={"attribute": attributes, "split": split},
    body="manipulator",
    level_name="attributes",
    group="level",
    demo=Demo("household-smoke-v1", ("oracle", "random"), "attribute"),
    env="sortie.missions.household.env:HouseholdEnv",
    actions=(Subtask,),
    generator="sortie.generation.household_suites:generate_household_suite",
    exports=("sft", "dpo", "emmoe"),
    readings=READINGS,
)
