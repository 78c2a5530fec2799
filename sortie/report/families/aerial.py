"""How reports show the aerial family: MissionBench's table, its stages, its maps and panel.

The mission panel of an episode page shows the mission, the agent's report and the verdict.
"""

from __future__ import annotations

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.trajectory import Trajectory
from sortie.missions.aerial.facts import aerial_facts
from sortie.missions.aerial.family import AERIAL_COLUMNS
from sortie.missions.aerial.spec import MissionType, aerial_data
from sortie.report.descriptor import FamilyReport, MapMarks, PaperTable, Score
from sortie.report.html import esc
from sortie.report.panels import PanelContext, Panels, line


def mission_panel(context: PanelContext) -> list[str]:
    """Return the instruction, types, expected answer and task action, then the verdict."""
    data = aerial_data(context.trajectory.header.episode)
    lines = [
        line("instruction", data.instruction),
        line("types", ", ".join(data.types)),
    ]
    if data.answer is not None:
        lines.append(line("expected answer", f"{data.answer} ({data.answer_kind})"))
    if data.task_action:
        lines.append(line("task action", data.task_action))
    return lines + verdict_lines(context.trajectory)


def verdict_lines(trajectory: Trajectory) -> list[str]:
    """Return what the agent reported, the judge's verdict and what ended the flight."""
    try:
        facts = aerial_facts(trajectory)
    except ConfigError as error:
        return [f"<p class='failure'>{esc(error)}</p>"]
    lines = [line("the agent's report", facts.report or "(none)")]
    verdict = facts.verdict
    if verdict is not None:
        word = "match" if verdict.match else "no match"
        css = "success" if verdict.match else "failure"
        detail = esc(" — " + verdict.detail) if verdict.detail else ""
        lines.append(
            f"<p><b>judge {esc(verdict.judge)}:</b> <span class='{css}'>{word}</span>, "
            f"score {verdict.score:.2f}{detail}</p>"
        )
    elif facts.judge:
        lines.append(line("judge", f"{facts.judge} (no answer expected)"))
    return lines + [line("ended by", facts.ended_by or "the step budget")]


PANELS = Panels(mission=mission_panel)


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


REPORT = FamilyReport(
    headline=("sr", "mp"),
    tables=(
        PaperTable(
            "MissionBench table: SR, OSR (5 m), MP, Eff, CR (%), Δ = OSR − SR, steps",
            AERIAL_COLUMNS,
            note=(
                "Eff = 1 − steps / T_max counts steps whatever they achieve: an agent that ends "
                "its flights early (random says done one step in nine) scores high on it "
                "(docs/aerial.md, Baselines)"
            ),
        ),
    ),
    decay_title="SR and MP (%) per mission type",
    run_scores=(Score("SR", "sr", 0), Score("MP", "mp", 1), Score("Eff", "eff", 1)),
    episode_scores=(Score("SR", "sr", 0), Score("MP", "mp", 1)),
    stage_names={"S1": "reach", "S2": "done"},
    episode_stage_names=stage_names,
    map_marks=map_marks,
    panels=PANELS,
)
