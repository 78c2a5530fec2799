"""The aerial family's part of an episode page: the mission, the agent's report, the verdict."""

from __future__ import annotations

from sortie.core.errors import ConfigError
from sortie.core.records_io import Trajectory
from sortie.missions.aerial.facts import aerial_facts
from sortie.missions.aerial.spec import aerial_data
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
