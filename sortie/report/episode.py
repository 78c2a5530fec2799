"""One report page per episode: map, clip, stage timeline, failure, and what the agent said."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sortie.core.errors import ConfigError, SortieError
from sortie.core.records_io import Trajectory, read_trajectory
from sortie.core.trajectory import ModelCallRecord, StageRecord, StepRecord
from sortie.missions.registry import check_episode
from sortie.report.clips import write_clip
from sortie.report.html import HtmlTable, Pre, esc, page, preformatted, render_table, slug
from sortie.report.maps import LEGEND, OTHER, STAGE_COLOURS, WorldMaps, draw_episode_map
from sortie.run.store import Store, StoredEpisode

EPISODES_FOLDER = "episodes"


@dataclass(frozen=True, slots=True)
class EpisodePage:
    """A written episode page: its name inside the episodes folder and what it shows."""

    episode: StoredEpisode
    name: str
    has_clip: bool


def write_episode_page(
    store: Store, run: str, episode: StoredEpisode, folder: Path, maps: WorldMaps
) -> EpisodePage:
    """Write ``folder/<name>.html`` with its map and clip beside it; return what was written."""
    name = slug(run, episode.key)
    sections = [_summary(run, episode)]
    trajectory, problem = _read(episode)
    clip = None
    if trajectory is not None:
        clip, clip_html = _clip(trajectory.steps, store.folder, folder, name)
        sections.append(
            f"<div class='views'>{_map(trajectory, maps, folder, name)}{clip_html}</div>"
        )
    else:
        sections.append(f"<p class='failure'>{esc(problem)}</p>")
    sections.append(_stages(store.stages(run, episode.key)))
    sections.append(_failure(episode))
    if trajectory is not None:
        sections += [_events(trajectory.steps), _outputs(trajectory.steps)]
    title = f"{episode.episode_id} · {run}"
    nav = "<nav><a href='../index.html'>← report index</a></nav>"
    body = f"{nav}<h1>{esc(title)}</h1>" + "".join(sections)
    (folder / f"{name}.html").write_text(page(title, body, root="../"), encoding="utf-8")
    return EpisodePage(episode, f"{name}.html", clip is not None)


def _read(episode: StoredEpisode) -> tuple[Trajectory | None, str]:
    """Return the episode's record, or None and why it could not be read."""
    try:
        return read_trajectory(episode.record, check=check_episode), ""
    except (ConfigError, OSError) as error:
        return None, f"The trajectory record could not be read: {error}"


def _summary(run: str, episode: StoredEpisode) -> str:
    metrics = episode.metrics
    facts = [
        ("run", run),
        ("key", episode.key),
        ("episode", episode.episode_id),
        ("suite", episode.suite),
        ("level", episode.level),
        ("repeat", str(episode.repeat)),
        ("seed", str(episode.seed)),
        ("outcome", episode.outcome),
        ("failure reason", episode.failure_reason or "–"),
        ("steps", str(episode.steps)),
        ("TS", _number(metrics.get("ts"))),
        ("collisions", _number(metrics.get("collisions"), 0)),
        ("wall seconds", _number(episode.wall_seconds, 2)),
        ("attempts", str(episode.attempts)),
    ]
    return render_table(HtmlTable("", ("field", "value"), facts))


def _map(trajectory: Trajectory, maps: WorldMaps, folder: Path, name: str) -> str:
    spec, agent = trajectory.header.episode, trajectory.header.agent
    arguments = json.dumps(agent.args, sort_keys=True, ensure_ascii=False)
    text = (
        f"<section><h2>Map</h2><p>World {esc(spec.world.builder)} (seed "
        f"{spec.world.seed}); agent {esc(agent.name)} {esc(arguments)}.</p>"
    )
    try:
        background = maps.background(spec.world)
    except SortieError as error:  # a world only another backend can build, say
        return f"{text}<p class='failure'>No map: {esc(error)}</p></section>"
    draw_episode_map(background, spec, trajectory.steps, folder / "maps" / f"{name}.png")
    return (
        f"{text}{_LEGEND_HTML}<img src='maps/{esc(name)}.png' "
        "alt='top-down map of the episode'></section>"
    )


def _legend_entries() -> list[tuple[str, str, tuple[int, int, int], str]]:
    """Return (css class, glyph, colour, meaning) of each legend entry: stages, then markers."""
    stages = [
        (f"path-{k}", "━", c, f"path in {name}" if name else "path after the last stage")
        for k, (name, c) in enumerate([*STAGE_COLOURS.items(), (None, OTHER)])
    ]
    return stages + [(f"mark-{k}", g, c, meaning) for k, (g, c, meaning) in enumerate(LEGEND)]


def legend_css() -> str:
    """Return the style rules that colour the map legend (pages allow no inline styles)."""
    return "".join(
        f".{css} {{ color: rgb{colour}; font-weight: bold; }}\n"
        for css, _, colour, _ in _legend_entries()
    )


_LEGEND_HTML = (
    "<p class='legend'>"
    + "".join(
        f"<span><span class='{css}'>{glyph}</span> {esc(meaning)}</span>"
        for css, glyph, _, meaning in _legend_entries()
    )
    + "</p>"
)


def _clip(
    steps: Sequence[StepRecord], frames_root: Path, folder: Path, name: str
) -> tuple[Path | None, str]:
    clip = None
    try:
        clip = write_clip(steps, frames_root, folder / "clips" / f"{name}.gif")
    except ConfigError as error:
        text = f"<p class='failure'>No clip: {esc(error)}</p>"
    else:
        text = (
            "<p>No frames were recorded for this episode.</p>"
            if clip is None
            else f"<img class='clip' src='clips/{esc(name)}.gif' alt='what the agent saw'>"
        )
    return clip, f"<section><h2>Ego view</h2>{text}</section>"


def _stages(stages: Sequence[StageRecord]) -> str:
    columns = (
        "stage",
        "status",
        "target",
        "started step",
        "done step",
        "steps",
        "d init (m)",
        "d best (m)",
        "d final (m)",
        "collisions",
        "sim seconds",
    )
    rows = [
        (
            s.name,
            s.status,
            s.target or "–",
            _number(s.started_step, 0),
            _number(s.done_step, 0),
            str(s.steps),
            _number(s.d_init, 2),
            _number(s.d_best, 2),
            _number(s.d_final, 2),
            str(s.collisions),
            _number(s.clock_sim, 1),
        )
        for s in stages
    ]
    if not rows:
        return "<h2>Stages</h2><p>No stage records (the episode ended before its first step).</p>"
    return render_table(HtmlTable("Stages", columns, rows, frozenset(columns[3:])))


def _failure(episode: StoredEpisode) -> str:
    if episode.failure_reason is None and episode.error is None:
        return ""
    parts = [f"<h2>Failure</h2><p class='failure'>{esc(episode.failure_reason or 'error')}</p>"]
    if episode.error:
        parts.append(preformatted(episode.error))
    return "".join(parts)


def _events(steps: Sequence[StepRecord]) -> str:
    rows = [(str(s.index), e.kind, e.target or "", e.detail) for s in steps for e in s.events]
    if not rows:
        return ""
    return render_table(
        HtmlTable("Events", ("step", "kind", "target", "detail"), rows, frozenset({"step"}))
    )


def _outputs(steps: Sequence[StepRecord]) -> str:
    rows = [
        (
            str(s.index),
            s.stage or "–",
            json.dumps(s.action, ensure_ascii=False),
            Pre(s.agent_output or ""),
            Pre(_calls(s.model_calls)),
        )
        for s in steps
        if s.agent_output or s.model_calls
    ]
    if not rows:
        return "<h2>Agent output</h2><p>The agent reported no output.</p>"
    columns = ("step", "stage", "action", "agent output", "model calls")
    return render_table(HtmlTable("Agent output", columns, rows, frozenset({"step"})))


def _calls(calls: Sequence[ModelCallRecord]) -> str:
    return "\n".join(
        f"{c.model}: {c.latency:.2f} s, {c.tokens_in}→{c.tokens_out} tokens, "
        f"{c.attempts} attempt(s){', cached' if c.cached else ''}"
        f"{f', error {c.error}' if c.error else ''}"
        for c in calls
    )


def _number(value: float | int | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"
