"""The step player of an episode page: its data file, its frames and its markup.

Pages open from disk, where Chromium refuses ``fetch()`` of ``file://`` URLs, so an episode's
steps reach the page's script as a script file of their own (``data/<name>.js``) that sets
``window.sortieEpisode``; ``player.js`` (shared) reads it and moves the frame, the map marker
and the step's text together. Every text is put into the page with ``textContent``, never as
markup, and the page's policy allows scripts from the report's folder only.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from importlib import resources
from itertools import groupby
from pathlib import Path

from sortie.core.episode import EpisodeSpec
from sortie.core.records import ModelCallRecord, StepRecord
from sortie.missions.registry import FAMILIES
from sortie.report.clips import clip_sensor
from sortie.report.descriptor import report_of
from sortie.report.html import esc
from sortie.run.frames import frame_path
from sortie.sim.topdown import TopDownMap

PLAYER_SCRIPT = "player.js"
INDEX_SCRIPT = "index.js"
DATA_FOLDER = "data"
FRAMES_FOLDER = "frames"


def stage_names(family: str, spec: EpisodeSpec | None = None) -> Mapping[str, str]:
    """Return the names of the stages of ``spec`` (or of any episode of ``family``)."""
    return report_of(family).stages_of(spec) if family in FAMILIES else {}


def stage_label(names: Mapping[str, str], stage: str | None) -> str:
    """Return ``S2 rescue`` for a named stage, the bare name otherwise, ``–`` for none."""
    if stage is None:
        return "–"
    name = names.get(stage)
    return f"{stage} {name}" if name else stage


def write_scripts(out: Path) -> None:
    """Copy the report's script files (shipped as package data) into ``out``."""
    for name in (PLAYER_SCRIPT, INDEX_SCRIPT):
        text = resources.files("sortie.report").joinpath("assets", name).read_text("utf-8")
        (out / name).write_text(text, encoding="utf-8")


def copy_frame(frames_root: Path, digest: str, out: Path) -> str:
    """Put the stored frame ``digest`` into the report at ``out``; return its relative path.

    Frames are named by hash, so a frame seen in many steps or episodes is copied once.
    """
    relative = f"{FRAMES_FOLDER}/{digest[:2]}/{digest}.png"
    target = out / relative
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(frame_path(frames_root, digest), target)  # same disk: no copy at all
        except OSError:
            shutil.copyfile(frame_path(frames_root, digest), target)
    return relative


def step_data(
    steps: Sequence[StepRecord],
    names: Mapping[str, str],
    topdown: TopDownMap | None,
    size: tuple[int, int],
) -> list[dict[str, object]]:
    """Return what the player shows of each step, the map position as a share of ``size``."""
    return [_step(step, names, topdown, size) for step in steps]


def _step(
    step: StepRecord, names: Mapping[str, str], topdown: TopDownMap | None, size: tuple[int, int]
) -> dict[str, object]:
    where = None
    if topdown is not None:
        col, row = topdown.pixel(step.pose.x, step.pose.y)
        where = [round(col / size[0], 4), round(row / size[1], 4)]
    return {
        "i": step.index,
        "stage": stage_label(names, step.stage),
        "stageKey": step.stage or "",
        "at": where,
        "yaw": round(step.pose.yaw, 1),
        "pose": f"x {step.pose.x:.1f}, y {step.pose.y:.1f}, z {step.pose.z:.1f} m, "
        f"heading {step.pose.yaw:.0f}°",
        "action": json.dumps(step.action.model_dump(mode="json"), ensure_ascii=False),
        "said": step.agent_output or "",
        "calls": calls_text(step.model_calls),
        "events": [" ".join(filter(None, (e.kind, e.target, e.detail))) for e in step.events],
        "collision": step.collisions > 0,
    }


def calls_text(calls: Sequence[ModelCallRecord]) -> str:
    """Return one line per model call: model, latency, tokens, attempts, cache, error.

    A call asked in a weaker format, cut at the token limit or served by a named chat
    template says so on its line; the model's thinking, if it sent any, follows the line.
    """
    return "\n".join(_call_text(c) for c in calls)


def _call_text(c: ModelCallRecord) -> str:
    line = (
        f"{c.model}: {c.latency:.2f} s, {c.tokens_in}→{c.tokens_out} tokens, "
        f"{c.attempts} attempt(s){', cached' if c.cached else ''}"
        f"{f', error {c.error}' if c.error else ''}"
        f"{f', format {c.format}' if c.format else ''}"
        f"{f', ended by {c.finish_reason}' if c.finish_reason else ''}"
        f"{f', template {c.chat_template}' if c.chat_template else ''}"
    )
    return f"{line}\n  thinking: {c.reasoning}" if c.reasoning else line


def stage_spans(steps: Sequence[StepRecord], names: Mapping[str, str]) -> list[dict[str, object]]:
    """Return the runs of steps in one stage: label, key, first position and length."""
    spans, position = [], 0
    for stage, run in groupby(steps, key=lambda s: s.stage):
        length = len(list(run))
        spans.append(
            {"label": stage_label(names, stage), "key": stage or "", "from": position, "n": length}
        )
        position += length
    return spans


def frame_list(steps: Sequence[StepRecord], frames_root: Path, out: Path) -> list[str | None]:
    """Return each step's frame as a path relative to the report (None where none was kept)."""
    sensor = clip_sensor(steps)
    if sensor is None:
        return [None] * len(steps)
    return [
        copy_frame(frames_root, s.frames[sensor], out) if sensor in s.frames else None
        for s in steps
    ]


def write_data(path: Path, data: Mapping[str, object]) -> None:
    """Write the episode's player data as a script that sets ``window.sortieEpisode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # ASCII-only JSON is a valid script whatever the text holds (no U+2028 surprises).
    path.write_text(f"window.sortieEpisode = {json.dumps(data)};\n", encoding="utf-8")


def player_html(map_src: str | None, data_src: str, root: str) -> str:
    """Return the player's markup and its two script tags (data first, then the player)."""
    picture = (
        f"<div class='mapbox'><img id='player-map' src='{esc(map_src)}' alt='map of the "
        "episode'><div id='player-marker' class='marker'></div></div>"
        if map_src
        else ""
    )
    return (
        "<section id='player'><h2>Step by step</h2>"
        "<div class='controls'><button id='player-play' type='button'>play</button>"
        "<div class='track'><input id='player-slider' type='range' min='0' max='0' value='0' "
        "aria-label='step'><div id='player-stages' class='stagebar'></div></div>"
        "<span id='player-step'></span></div>"
        "<div class='views'><div>"
        "<img id='player-frame' class='frame' alt='what the agent saw' hidden>"
        "<p id='player-noframe'>No frame was recorded for this step.</p></div>"
        f"{picture}<div class='said'><p id='player-stage'></p><p id='player-pose'></p>"
        "<h3>action</h3><pre id='player-action'></pre><h3>the agent said</h3>"
        "<pre id='player-said'></pre><h3>model calls</h3><pre id='player-calls'></pre>"
        "<h3>events</h3><ul id='player-events'></ul></div></div>"
        "<p class='hint'>← → step, space plays or pauses.</p></section>"
        f"<script src='{esc(data_src)}'></script>"
        f"<script src='{root}{PLAYER_SCRIPT}'></script>"
    )
