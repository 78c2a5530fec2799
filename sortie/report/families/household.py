"""How reports show the household family: EMMOE's table, its progress steps, its pages.

Its runs also get the executor's error codes (``household_codes``). The household parts of an
episode page are the task panel and one block per planner round.

The task panel shows the instruction, attributes, split, goal conditions (with each object's
final state), the keypaths (with how many of their steps the rounds carried out in order, the
best one marked) and how the episode ended. Each round's block shows the four views seen after
it (if frames were recorded), the subtask as the planner wrote it and as the executor resolved
it, the skill, the status, the error code and its meaning, the feedback, every attempt and the
inventory after the round. Everything the planner or executor wrote goes through ``esc``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from sortie.core.errors import ConfigError
from sortie.core.records import StepRecord
from sortie.core.trajectory import Trajectory
from sortie.missions.household.facts import HouseholdFacts, household_facts
from sortie.missions.household.family import HOUSEHOLD_COLUMNS
from sortie.missions.household.observation import VIEW_NAMES
from sortie.missions.household.records import (
    ERROR_MEANINGS,
    AttemptRecord,
    GoalCondition,
    HouseholdTask,
    KeyStep,
    Relation,
    RoundRecord,
    error_kind,
)
from sortie.missions.household.rules import matched
from sortie.missions.household.vocabulary import round_of
from sortie.report.descriptor import FamilyReport, PaperTable, Score
from sortie.report.families.household_codes import CODE_TABLE
from sortie.report.html import HtmlTable, esc, render_table
from sortie.report.panels import PanelContext, Panels
from sortie.report.player import copy_frame


# --- the task panel ------------------------------------------------------------------------
def task_panel(trajectory: Trajectory) -> list[str]:
    """Return the lines of the mission panel of a household episode."""
    try:
        task = HouseholdTask.model_validate(trajectory.header.episode.mission)
    except ValidationError as error:
        return [f"<p class='failure'>The task could not be read: {esc(error)}</p>"]
    rounds = [r for r in map(round_of, trajectory.steps) if r is not None]
    facts = _facts(trajectory)
    return [
        _line("instruction", task.instruction),
        _line("attributes", ", ".join(a.value for a in task.attributes)),
        _line("split", task.split.value),
        _line("round budget", task.max_rounds),
        _goals(task.goals, facts),
        _keypaths(task, rounds),
        _outcome(trajectory, facts),
    ]


def _line(label: str, text: object) -> str:
    return f"<p><b>{esc(label)}:</b> {esc(text)}</p>"


def _facts(trajectory: Trajectory) -> HouseholdFacts | None:
    """Return the episode's final state, or None when its footer has none to read."""
    try:
        return household_facts(trajectory)
    except ConfigError:
        return None


def _goals(goals: Sequence[GoalCondition], facts: HouseholdFacts | None) -> str:
    if not goals:
        return _line("goal conditions", "none")
    items = "".join(
        f"<li>{esc(goal_text(g))} <span class='hint'>(at the end: {esc(final_state(g, facts))})"
        "</span></li>"
        for g in goals
    )
    return f"<p><b>goal conditions:</b></p><ul>{items}</ul>"


def goal_text(goal: GoalCondition) -> str:
    """Return a goal condition as words: ``mug_1 on table_0``, ``fridge_0 closed``."""
    place = f" {goal.place}" if goal.place else ""
    return f"{goal.object} {goal.relation.value}{place}"


def final_state(goal: GoalCondition, facts: HouseholdFacts | None) -> str:
    """Return the state at the end of the object a goal condition is about."""
    if facts is None:
        return "unknown"
    if goal.relation in (Relation.OPEN, Relation.CLOSED):
        state = facts.open.get(goal.object)
        return "unknown" if state is None else ("open" if state else "closed")
    place = facts.places.get(goal.object)
    if place is None:
        return "unknown"
    return f"{place.relation} {place.place}" if place.place else place.relation


def _keypaths(task: HouseholdTask, rounds: Sequence[RoundRecord]) -> str:
    done = [matched(k, rounds, task) for k in task.keypaths]
    shares = [d / len(k) for d, k in zip(done, task.keypaths, strict=True)]
    best = shares.index(max(shares))
    items = []
    for k, (path, count) in enumerate(zip(task.keypaths, done, strict=True)):
        steps = " → ".join(step_text(s) for s in path)
        css = " class='best'" if k == best else ""
        mark = " (best)" if k == best else ""
        items.append(
            f"<li{css}>{esc(steps)} <span class='hint'>{count}/{len(path)} steps carried out "
            f"in order{mark}</span></li>"
        )
    return f"<p><b>keypaths:</b></p><ol>{''.join(items)}</ol>"


def step_text(step: KeyStep) -> str:
    """Return a keypath step as words: ``pick mug_1``, ``put mug_1 on table_0``."""
    place = f" on {step.place}" if step.place else ""
    return f"{step.action.value} {step.target}{place}".strip()


def _outcome(trajectory: Trajectory, facts: HouseholdFacts | None) -> str:
    footer = trajectory.footer
    css = "success" if footer.outcome == "success" else "failure"
    reason = f" ({footer.failure_reason})" if footer.failure_reason else ""
    ended = "" if facts is None else ("; the planner said end" if facts.ended else "")
    held = f"; holding {facts.held}" if facts and facts.held else ""
    return (
        f"<p><b>outcome:</b> <span class='{css}'>{esc(footer.outcome)}{esc(reason)}</span>"
        f" after {footer.steps} rounds{esc(ended)}{esc(held)}</p>"
    )


# --- the rounds ----------------------------------------------------------------------------
def rounds_section(steps: Sequence[StepRecord], frames_root: Path, out: Path) -> str:
    """Return the rounds section; the frames it shows are copied into the report at ``out``."""
    blocks = [
        _round(s, frames_root, out) if round_of(s) is not None else _unanswered(s)
        for s in steps
        if round_of(s) is not None or s.action.type == "invalid"
    ]
    if not blocks:
        return "<section><h2>Rounds</h2><p>No planner rounds were recorded.</p></section>"
    return "<section class='rounds'><h2>Rounds</h2>" + "".join(blocks) + "</section>"


def _round(step: StepRecord, frames_root: Path, out: Path) -> str:
    record = round_of(step)
    assert record is not None
    css = "success" if record.succeeded else ("failure" if record.failed else "")
    status = record.status.value + (f" {record.code.value}" if record.code else "")
    heading = f"<h3>Round {record.round} · <span class='{css}'>{esc(status)}</span></h3>"
    table = render_table(HtmlTable("", ("field", "value"), round_rows(record)))
    return (
        f"<div class='round' id='round-{record.round}'>{heading}"
        f"{_views(step, frames_root, out)}{table}{_attempts(record.attempts)}</div>"
    )


def _unanswered(step: StepRecord) -> str:
    """Return the block of a step with no readable answer: no round, the episode's end."""
    error = getattr(step.action, "error", "") or "no readable answer"
    return (
        f"<div class='round'><h3>Step {step.index} · <span class='failure'>no answer</span></h3>"
        f"<p>The planner gave no readable answer ({esc(error)}): the episode ends here as "
        f"<code>no_answer</code>; this is no round and no <code>end</code>.</p></div>"
    )


def round_rows(record: RoundRecord) -> list[tuple[str, str]]:
    """Return the (what, value) rows of one round: the planner's words, then the executor's."""
    place = f", place {record.place!r}" if record.place is not None else ""
    resolved = (
        f"{record.verb.value if record.verb else '(unknown action)'} "
        f"{record.target_object or '(no object)'}"
        + (f" on {record.place_object}" if record.place_object else "")
    )
    code = (
        f"{record.code.value} ({error_kind(record.code)}): {ERROR_MEANINGS[record.code]}"
        if record.code
        else "–"
    )
    return [
        ("subtask (as written)", f"action {record.action!r}, target {record.target!r}{place}"),
        ("resolved by the executor", resolved),
        ("skill", record.skill or "–"),
        ("status", record.status.value),
        ("error code", code),
        ("feedback", record.feedback or "–"),
        ("inventory after", ", ".join(record.inventory) or "empty"),
    ]


def _views(step: StepRecord, frames_root: Path, out: Path) -> str:
    if not any(name in step.frames for name in VIEW_NAMES):
        return "<p class='hint'>frames not recorded</p>"
    figures = "".join(_figure(step, name, frames_root, out) for name in VIEW_NAMES)
    return f"<div class='views4'>{figures}</div><p class='hint'>the views after the round</p>"


def _figure(step: StepRecord, name: str, frames_root: Path, out: Path) -> str:
    digest = step.frames.get(name)
    if digest is None:
        return f"<figure><p>no {esc(name)} frame</p><figcaption>{esc(name)}</figcaption></figure>"
    try:
        src = "../" + copy_frame(frames_root, digest, out)
    except OSError as error:
        shown = f"<p class='failure'>frame missing: {esc(error.strerror)}</p>"
    else:
        shown = f"<img src='{esc(src)}' alt='the {esc(name)} view'>"
    return f"<figure>{shown}<figcaption>{esc(name)}</figcaption></figure>"


def _attempts(attempts: Sequence[AttemptRecord]) -> str:
    if not attempts:
        return "<p class='hint'>no attempt: nothing was executed</p>"
    rows = [
        (
            str(k),
            a.skill,
            "success" if a.success else ("timed out" if a.timed_out else "failed"),
            f"{a.seconds:.1f}",
            f"{path_length(a):.2f}",
        )
        for k, a in enumerate(attempts, 1)
    ]
    columns = ("attempt", "skill", "result", "seconds", "path (m)")
    return render_table(HtmlTable("", columns, rows, frozenset({"attempt", "seconds", "path (m)"})))


def path_length(attempt: AttemptRecord) -> float:
    """Return the length of the base's motion in one attempt, metres."""
    return sum(math.dist(a, b) for a, b in zip(attempt.path, attempt.path[1:], strict=False))


def _mission_panel(context: PanelContext) -> list[str]:
    return task_panel(context.trajectory)


def _rounds(context: PanelContext) -> str:
    return rounds_section(context.trajectory.steps, context.frames_root, context.folder.parent)


PANELS = Panels(mission=_mission_panel, sections=_rounds)
"""The household family's part of an episode page: the task panel and the rounds."""


REPORT = FamilyReport(
    headline=("sr", "tp"),
    tables=(PaperTable("EMMOE table: SR, TP, SER, SRR, PLWSR, GC (%)", HOUSEHOLD_COLUMNS),),
    decay_title="SR and TP (%) per task template",
    progress=(
        ("TP≥25", "tp", 0.25),
        ("TP≥50", "tp", 0.5),
        ("TP≥75", "tp", 0.75),
        ("TP=100", "tp", 1.0),
        ("SR", "sr", 1.0),
    ),
    run_scores=(Score("SR", "sr", 0), Score("TP", "tp", 2), Score("rounds", "rounds", 0)),
    episode_scores=(
        Score("SR", "sr", 0),
        Score("TP", "tp", 2),
        Score("PLWSR", "plwsr", 2),
        Score("GC", "gc", 2),
    ),
    stage_names={"S1": "task"},
    panels=PANELS,
    run_tables=(CODE_TABLE,),
)
