"""One report page per episode: the mission, a step player over frames and map, stages, events."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, SortieError
from sortie.core.records import EventRecord, StageRecord, StepRecord
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.missions.registry import FAMILIES, check_episode
from sortie.report.clips import write_clip
from sortie.report.descriptor import report_of
from sortie.report.html import HtmlTable, Pre, esc, page, preformatted, render_table, slug
from sortie.report.maps import (
    LEGEND,
    OTHER,
    STAGE_COLOURS,
    Floor,
    WorldMaps,
    draw_episode_map,
    episode_view,
    legend_keys,
)
from sortie.report.panels import PanelContext, Panels
from sortie.report.player import (
    DATA_FOLDER,
    calls_text,
    frame_list,
    player_html,
    stage_label,
    stage_names,
    stage_spans,
    step_data,
    write_data,
)
from sortie.report.reference import ReferenceViews
from sortie.report.tables import runs_family
from sortie.run.store import Store, StoredEpisode
from sortie.sim.topdown import TopDownMap

EPISODES_FOLDER = "episodes"


@dataclass(frozen=True, slots=True)
class EpisodePage:
    """A written episode page: its name inside the episodes folder and what it shows."""

    episode: StoredEpisode
    name: str
    has_clip: bool
    map: str | None = None
    """The page's map picture, relative to the episodes folder (None: no map was drawn)."""


@dataclass(frozen=True, slots=True)
class PageTools:
    """What every page of a report shares: the world maps and the reference renders."""

    maps: WorldMaps
    references: ReferenceViews


def write_episode_page(
    store: Store, run: str, episode: StoredEpisode, folder: Path, tools: PageTools
) -> EpisodePage:
    """Write ``folder/<name>.html`` with its map, frames and data beside it; return it."""
    name = slug(run, episode.key)
    trajectory, problem = _read(episode)
    family = runs_family(store, [run])
    summary = _summary(run, episode, family)
    if trajectory is None:
        sections, clip, map_src = [summary, f"<p class='failure'>{esc(problem)}</p>"], None, None
    else:
        sections, clip, map_src = _views(store, trajectory, tools, folder, name)
        sections.insert(3, summary)  # after the mission, the map's caption and the player
    names = stage_names(family, trajectory.header.episode if trajectory else None)
    sections += [_stages(store.stages(run, episode.key), names), _failure(episode)]
    if trajectory is not None:
        sections += [_events(trajectory.steps), _outputs(trajectory.steps, names)]
    title = f"{episode.episode_id} · {run}"
    nav = "<nav><a href='../index.html'>← report index</a></nav>"
    body = f"{nav}<h1>{esc(title)}</h1>" + "".join(sections)
    (folder / f"{name}.html").write_text(page(title, body, root="../"), encoding="utf-8")
    return EpisodePage(episode, f"{name}.html", clip is not None, map_src)


def _views(
    store: Store, trajectory: Trajectory, tools: PageTools, folder: Path, name: str
) -> tuple[list[str], Path | None, str | None]:
    """Return the mission, map caption, player and clip sections, the clip and the first map."""
    context = PanelContext(trajectory, tools.references, folder, name, store.folder)
    panels = report_of(trajectory.header.episode.family).panels
    mission = _mission(panels, context)
    drawn, map_html = _map(trajectory, tools.maps, folder, name)
    clip, clip_html = _clip(trajectory.steps, store.folder, folder, name)
    player = _player(trajectory, store.folder, folder, name, drawn)
    clip_html += panels.sections(context)
    return [mission, map_html, player, clip_html], clip, drawn[0].src if drawn else None


def _read(episode: StoredEpisode) -> tuple[Trajectory | None, str]:
    """Return the episode's record, or None and why it could not be read."""
    try:
        return read_trajectory(episode.record, check=check_episode), ""
    except (ConfigError, OSError) as error:
        return None, f"The trajectory record could not be read: {error}"


def _summary(run: str, episode: StoredEpisode, family: str) -> str:
    metrics = episode.metrics
    described = FAMILIES.get(family)
    scores = [(s.label, s.metric, s.digits) for s in report_of(family).episode_scores]
    facts = [
        ("run", run),
        ("key", episode.key),
        ("episode", episode.episode_id),
        ("suite", episode.suite),
        (described.group, episode.level),
        ("repeat", str(episode.repeat)),
        ("seed", str(episode.seed)),
        ("outcome", episode.outcome),
        ("failure reason", episode.failure_reason or "–"),
        ("steps", str(episode.steps)),
        *((label, _number(metrics.get(key), digits)) for label, key, digits in scores),
        ("wall seconds", _number(episode.wall_seconds, 2)),
        ("attempts", str(episode.attempts)),
    ]
    return render_table(HtmlTable("", ("field", "value"), facts))


def _mission(panels: Panels, context: PanelContext) -> str:
    """Return the mission panel: what the agent was asked (and how it answered), if any."""
    lines = panels.mission(context)
    if not lines:
        return ""
    return "<section class='mission'><h2>Mission</h2>" + "".join(lines) + "</section>"


@dataclass(frozen=True, slots=True)
class DrawnMap:
    """One map picture of an episode: the floor it shows, the map drawn on, its file."""

    floor: Floor
    view: TopDownMap
    src: str
    """The picture's path relative to the episodes folder."""


def _map(
    trajectory: Trajectory, maps: WorldMaps, folder: Path, name: str
) -> tuple[list[DrawnMap], str]:
    """Draw the episode's maps (one per floor it used); return them and the maps' caption."""
    spec, agent = trajectory.header.episode, trajectory.header.agent
    arguments = json.dumps(agent.args, sort_keys=True, ensure_ascii=False)
    text = (
        f"<p>World {esc(spec.world.builder)} (seed {spec.world.seed}); agent "
        f"{esc(agent.name)} {esc(arguments)}.</p>"
    )
    try:
        floors = maps.floors(spec.world)
    except SortieError as error:  # a world only another backend can build, say
        return [], f"{text}<p class='failure'>No map: {esc(error)}</p>"
    drawn = [
        _draw(trajectory, floor, background, folder, name, len(floors) > 1)
        for floor, background in _used(floors, spec, trajectory.steps)
    ]
    if len(drawn) > 1:
        text += f"<p>{len(drawn)} floors: the map shows the floor of the step the player is at.</p>"
    names = stage_names(spec.family, spec)
    legend = legend_html(names, trajectory.steps, legend_keys(spec, trajectory.steps))
    return drawn, f"<h2>Map and steps</h2>{text}{legend}"


def _used(
    floors: list[tuple[Floor, TopDownMap]], spec: EpisodeSpec, steps: Sequence[StepRecord]
) -> list[tuple[Floor, TopDownMap]]:
    """Return the floors the episode's start, steps or targets are on."""
    heights = [spec.start.z] + [s.pose.z for s in steps] + [p.pose.z for p in spec.placements]
    return [(f, m) for f, m in floors if any(f.holds(z) for z in heights)] or floors[:1]


def _draw(
    trajectory: Trajectory,
    floor: Floor,
    background: TopDownMap,
    folder: Path,
    name: str,
    several: bool,
) -> DrawnMap:
    spec, steps = trajectory.header.episode, trajectory.steps
    view = episode_view(background, spec, steps)
    file = f"{name}-floor{floor.number}.png" if several else f"{name}.png"
    draw_episode_map(view, spec, steps, folder / "maps" / file, floor)
    return DrawnMap(floor, view, f"maps/{file}")


def _size(picture: Path) -> tuple[int, int]:
    """Return a picture's size in pixels, its file closed again."""
    with Image.open(picture) as image:
        return image.size


def _player(
    trajectory: Trajectory, frames_root: Path, folder: Path, name: str, drawn: list[DrawnMap]
) -> str:
    """Write the player's data file (and copy the frames it shows); return its markup."""
    steps, spec = trajectory.steps, trajectory.header.episode
    names = stage_names(spec.family, spec)
    frames, log = _frames(steps, frames_root, folder.parent)
    view, size = (drawn[0].view, _size(folder / drawn[0].src)) if drawn else (None, (1, 1))
    data = step_data(steps, names, view, size)
    for step, record, frame in zip(data, steps, frames, strict=True):
        step["frame"] = frame
        step["map"] = k = next((k for k, d in enumerate(drawn) if d.floor.holds(record.pose.z)), 0)
        if len(drawn) > 1:
            step["pose"] = f"{step['pose']}, floor {drawn[k].floor.number}"
    payload = {
        "root": "../",
        "maps": [d.src for d in drawn],
        "steps": data,
        "spans": stage_spans(steps, names),
    }
    write_data(folder / DATA_FOLDER / f"{name}.js", payload)
    first = drawn[0].src if drawn else None
    return log + player_html(first, f"{DATA_FOLDER}/{name}.js", "../")


def _frames(
    steps: Sequence[StepRecord], frames_root: Path, out: Path
) -> tuple[list[str | None], str]:
    """Return each step's frame in the report (copied there) and a note if any is missing."""
    try:
        return frame_list(steps, frames_root, out), ""
    except OSError as error:
        return [None] * len(steps), f"<p class='failure'>Frames missing: {esc(error)}</p>"


def _legend_entries() -> list[tuple[str, str, tuple[int, int, int], str]]:
    """Return (css class, glyph, colour, meaning) of each legend entry: stages, then markers."""
    stages = [
        (f"path-{k}", "━", c, name or "")
        for k, (name, c) in enumerate([*STAGE_COLOURS.items(), (None, OTHER)])
    ]
    return stages + [(f"mark-{k}", g, c, meaning) for k, (g, c, meaning) in enumerate(LEGEND)]


def legend_css() -> str:
    """Return the style rules that colour the map legend and the player's stage bar."""
    marks = "".join(
        f".{css} {{ color: rgb{colour}; font-weight: bold; }}\n"
        for css, _, colour, _ in _legend_entries()
    )
    bars = "".join(
        f".stage-{key or 'none'} {{ background: rgb{colour}; }}\n"
        for key, colour in [*STAGE_COLOURS.items(), (None, OTHER)]
    )
    return marks + bars


def legend_html(names: Mapping[str, str], steps: Sequence[StepRecord], keys: set[str]) -> str:
    """Return the legend of one map: the stages its path passes through, the markers it has."""
    stages = {s.stage for s in steps}
    parts = []
    for css, glyph, _, meaning in _legend_entries():
        if css.startswith("path-"):
            stage = meaning or None
            if stage not in stages:
                continue
            meaning = (
                f"path in {stage_label(names, stage)}" if stage else "path after the last stage"
            )
        elif meaning not in keys:
            continue
        parts.append(f"<span><span class='{css}'>{glyph}</span> {esc(meaning)}</span>")
    return "<p class='legend'>" + "".join(parts) + "</p>"


def _clip(
    steps: Sequence[StepRecord], frames_root: Path, folder: Path, name: str
) -> tuple[Path | None, str]:
    clip = None
    try:
        clip = write_clip(steps, frames_root, folder / "clips" / name)
    except ConfigError as error:
        text = f"<p class='failure'>No clip: {esc(error)}</p>"
    else:
        text = (
            "<p>No frames were recorded for this episode.</p>"
            if clip is None
            else _clip_element(clip)
        )
    return clip, f"<section><h2>Ego view clip</h2>{text}</section>"


def _clip_element(clip: Path) -> str:
    """Return the HTML that shows a clip: a looping muted video, or the GIF fallback."""
    src = f"clips/{esc(clip.name)}"
    if clip.suffix == ".webm":
        return (
            f"<video class='clip' src='{src}' autoplay loop muted playsinline controls>"
            "what the agent saw</video>"
        )
    return f"<img class='clip' src='{src}' alt='what the agent saw'>"


def _stages(stages: Sequence[StageRecord], names: Mapping[str, str]) -> str:
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
            stage_label(names, s.name),
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


def event_runs(steps: Sequence[StepRecord]) -> list[tuple[int, int, int, EventRecord]]:
    """Return the events with each run of the same event made one: first, last step, count."""
    runs: list[tuple[int, int, int, EventRecord]] = []
    for step in steps:
        for event in step.events:
            if runs and runs[-1][3] == event:
                first, _, count, _ = runs[-1]
                runs[-1] = (first, step.index, count + 1, event)
            else:
                runs.append((step.index, step.index, 1, event))
    return runs


def _events(steps: Sequence[StepRecord]) -> str:
    rows = [
        (
            str(first) if first == last else f"{first}–{last}",
            str(count),
            e.kind,
            e.target or "",
            e.detail,
        )
        for first, last, count, e in event_runs(steps)
    ]
    if not rows:
        return ""
    columns = ("steps", "count", "kind", "target", "detail")
    return render_table(HtmlTable("Events", columns, rows, frozenset({"steps", "count"})))


def _outputs(steps: Sequence[StepRecord], names: Mapping[str, str]) -> str:
    rows = [
        (
            str(s.index),
            stage_label(names, s.stage),
            json.dumps(s.action.model_dump(mode="json"), ensure_ascii=False),
            Pre(s.agent_output or ""),
            Pre(calls_text(s.model_calls)),
        )
        for s in steps
        if s.agent_output or s.model_calls
    ]
    if not rows:
        return "<h2>Agent output</h2><p>The agent reported no output.</p>"
    columns = ("step", "stage", "action", "agent output", "model calls")
    return render_table(HtmlTable("Agent output", columns, rows, frozenset({"step"})))


def _number(value: float | int | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"
