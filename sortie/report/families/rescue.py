"""How reports show the rescue family: its paper's two tables, its stages, its mission panel.

The mission panel of an episode page shows the clue, the budget and the reference image.
"""

from __future__ import annotations

from sortie.core.errors import SortieError
from sortie.missions.rescue.spec import rescue_data
from sortie.report.descriptor import FamilyReport, PaperTable, Score
from sortie.report.html import esc
from sortie.report.panels import PanelContext, Panels, line


def mission_panel(context: PanelContext) -> list[str]:
    """Return the clue and budget, with the reference image the agent was shown first."""
    header = context.trajectory.header
    data = rescue_data(header.episode)
    lines = [line("clue", data.clue_text), line("budget", f"{data.budget_s:g} s")]
    picture = context.folder / "refs" / f"{context.name}.png"
    try:
        drawn = context.references.write(
            header.episode, data.reference_view, header.backend.args, picture
        )
    except SortieError as error:  # a world only another backend can build
        return [*lines, f"<p class='failure'>No reference image: {esc(error)}</p>"]
    if drawn:  # first, so that it floats beside the clue
        source = f"refs/{esc(context.name)}.png"
        lines.insert(0, f"<img src='{source}' alt='the reference image of the casualty'>")
    return lines


PANELS = Panels(mission=mission_panel)


REPORT = FamilyReport(
    headline=("tcr", "ts"),
    tables=(
        PaperTable(
            "Main table: task completion (TCR, %) and total score (TS, 0–100)",
            ("tcr", "ts"),
            pivot=True,
        ),
        PaperTable(
            "Stage diagnostics: stage scores (0–25), steps, HS (%), collisions",
            ("s1", "s2", "s3", "s4", "steps", "hs", "collisions"),
            overall_only=True,
            note=(
                "HS is the path's closeness to the expert's (1 − DTW / length / 50 m): an agent "
                "that stays near the start scores high on it, so random can beat the explorer "
                "(docs/rescue.md, Metrics)"
            ),
        ),
    ),
    decay_title="Decay across levels: TCR (%) and TS per level",
    run_scores=(Score("TS", "ts", 1), Score("collisions", "collisions", 0)),
    episode_scores=(Score("TS", "ts", 1), Score("collisions", "collisions", 0)),
    stage_names={"S1": "explore", "S2": "rescue", "S3": "return", "S4": "hand-off"},
    panels=PANELS,
)
