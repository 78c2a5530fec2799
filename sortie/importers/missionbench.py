"""MissionBench's missions (``mission_config.yaml`` folders) as an aerial suite for ``airsim``.

Every ``mission_config.yaml`` under the given folders is one mission (its folder is
``<Category>/<Env>/<name>``). Its world is ``airsim.<Env>``; poses are converted from AirSim
NED metres by ``sortie.backends.frames``; a patrol's reference path is read from the
``airsim_rec.txt`` beside it. The mission's own name, category, difficulty and annotated
start-to-goal distance (``ground_truth.depth``, MP's normaliser) go into the world's
parameters. MissionBench's settings for its own agent (``models_related``, ``skip_*``,
``langsmith_logging``) and its perception labels (``spatial_results``, ``point``,
``high_level_gt``) are not part of a mission and are not read.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from sortie.backends.frames import ned_point, ned_pose
from sortie.core.episode import EpisodeSpec, WorldSpec, check_name
from sortie.core.errors import ParameterError
from sortie.core.pose import Pose
from sortie.core.records_io import SuiteHeader
from sortie.importers.problems import Problems, read_text

BACKEND = "airsim"
"""The backend the imported suite is for (stated in the suite header)."""
WORLD_PREFIX = "airsim."
CONFIG = "mission_config.yaml"
RECORDING = "airsim_rec.txt"
CATEGORIES = {"visual_inspection": "inspection", "manipulation": "manipulation", "patrol": "patrol"}
"""MissionBench's task categories (lower-cased) and sortie's mission types."""
TASK_ACTIONS = {"drop": "drop_payload", "land": "land", "collect": "collect_sample"}
"""A manipulation's ``task_gt`` word and the task action it asks for."""
CAMERA = {"fov": 90.0, "pitch": -45.0}
"""The camera angles sortie's aerial missions use; a mission with others is refused."""
POSE_FIELDS = frozenset({"x", "y", "z", "yaw"})
FIELDS: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "name",
            "instruction",
            "target_object",
            "camera",
            "drone_start_pose",
            "ground_truth",
            "metadata",
            "tolerances",
            "models_related",
            "langsmith_logging",
        }
    ),
    "camera": frozenset({"fov", "width", "height", "pitch", "roll", "yaw"}),
    "drone_start_pose": POSE_FIELDS,
    "ground_truth": frozenset(
        {"waypoint_gt", "depth", "task_gt", "spatial_results", "point", "high_level_gt"}
    ),
    "ground_truth.waypoint_gt": POSE_FIELDS,
    "metadata": frozenset(
        {
            "task_category",
            "environment",
            "difficulty",
            "difficulty_level",
            "difficulty_description",
            "target_object",
            "task",
            "task_description",
        }
    ),
    "tolerances": frozenset({"MAX_ACTIONS", "MAX_STEP_SIZE", "x", "y", "z", "yaw"}),
}
"""The fields MissionBench's mission configs have, by section (top level: ""; ``skip_*`` flags
too). Any other is refused, as the RescueBench importer refuses unknown fields: a misplaced
``task_gt`` would otherwise leave an inspection without its expected answer, silently."""


def import_missionbench(paths: Sequence[Path], suite: str) -> tuple[SuiteHeader, list[EpisodeSpec]]:
    """Return the suite header and missions found under the folders ``paths``.

    Raises:
        ConfigError: every problem found, as ``<mission folder>: field: problem``.
    """
    problems = Problems("missionbench")
    check_name(suite, "suite name")
    configs = sorted({c for p in paths for c in _configs(p)})
    if not configs:
        problems.add(", ".join(map(str, paths)), CONFIG, "no mission folder found")
    episodes = [s for c in configs if (s := _mission(c, suite, problems)) is not None]
    seen: set[str] = set()
    for spec in episodes:
        if spec.episode_id in seen:
            problems.add(spec.episode_id, "name", "two missions of one environment share it")
        seen.add(spec.episode_id)
    problems.raise_if_any()
    header = SuiteHeader(
        suite=suite,
        generator="sortie.importers.missionbench",
        generator_version="1",
        settings={"backend": BACKEND, "source": "missionbench", "missions": len(episodes)},
    )
    return header, episodes


def _configs(path: Path) -> list[Path]:
    """Return the mission configs at ``path`` (a config, a mission folder or a dataset)."""
    if path.is_file():
        return [path]
    return sorted(path.rglob(CONFIG))


def _mission(config: Path, suite: str, problems: Problems) -> EpisodeSpec | None:
    """Return one mission folder's episode, or None after noting what is wrong with it."""
    where = str(config.parent)
    text = read_text(config, problems, where, CONFIG)
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        problems.add(where, CONFIG, f"not YAML ({error})".replace("\n", " ")[:300])
        return None
    if not isinstance(data, dict):
        problems.add(where, CONFIG, f"expected a mapping, got {type(data).__name__}")
        return None
    before = len(problems.found)
    _check_fields(data, where, problems)
    reader = _Reader(data, where, problems)
    kind = _category(reader)
    start, goal = reader.pose("drone_start_pose"), reader.pose("ground_truth.waypoint_gt")
    env = reader.name("metadata.environment")
    name = reader.name("name")
    tolerances = _tolerances(reader)
    _check_camera(reader)
    instruction = reader.text("instruction")
    extra = _by_type(kind, reader, config) if kind else {}
    depth = reader.number("ground_truth.depth")
    if len(problems.found) > before:
        return None
    assert start and goal and env and name and instruction and kind and depth is not None
    target = reader.optional("target_object")
    mission = {"instruction": instruction, "types": [kind], "goal": goal.as_list()}
    mission |= ({"target": target} if target else {}) | tolerances | extra
    params: dict[str, Any] = {"mission": name, "category": kind, "gt_depth": depth}
    ids = (f"{suite}/{env}/{name}", env)
    make = lambda: _episode(reader, ids, start, mission, params)  # noqa: E731
    return problems.checked(where, make)


def _episode(
    reader: _Reader,
    ids: tuple[str, str],
    start: Pose,
    mission: dict[str, Any],
    params: dict[str, Any],
) -> EpisodeSpec:
    """Return the episode of a checked mission: ``ids`` are its episode id and environment."""
    episode_id, env = ids
    difficulty = reader.optional("metadata.difficulty") or reader.optional(
        "metadata.difficulty_level"
    )
    params |= {"difficulty": str(difficulty)} if difficulty else {}
    kind, target = mission["types"][0], mission.get("target")
    return EpisodeSpec(
        episode_id=episode_id,
        family="aerial",
        level=kind,
        world=WorldSpec(builder=f"{WORLD_PREFIX}{env}", seed=0, params=params),
        start=start,
        targets={"target": target} if target else {},
        mission=mission,
    )


class _Reader:
    """Reads dotted fields of one mission config, noting each problem with its folder."""

    def __init__(self, data: dict[str, Any], where: str, problems: Problems) -> None:
        self.data, self.where, self.problems = data, where, problems

    def optional(self, field: str) -> Any:
        """Return ``field``'s value, or None if it (or a parent) is absent."""
        value: Any = self.data
        for part in field.split("."):
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    def get(self, field: str) -> Any:
        """Return ``field``'s value, noting it as missing if it is absent."""
        value = self.optional(field)
        if value is None:
            self.problems.add(self.where, field, "missing")
        return value

    def number(self, field: str) -> float | None:
        """Return ``field`` as a finite number, or None (noted)."""
        value = self.get(field)
        return None if value is None else self.problems.number(self.where, field, value)

    def text(self, field: str) -> str | None:
        """Return ``field`` as a non-empty string, or None (noted)."""
        value = self.get(field)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            self.problems.add(self.where, field, f"expected text, got {value!r}"[:200])
            return None
        return value

    def name(self, field: str) -> str | None:
        """Return ``field`` as a safe name (see ``check_name``), or None (noted)."""
        value = self.text(field)
        try:
            return None if value is None else check_name(value, field)
        except ParameterError as error:
            self.problems.add(self.where, field, str(error))
            return None

    def pose(self, field: str) -> Pose | None:
        """Return ``field``'s ``{x, y, z, yaw}`` (NED metres, degrees) as a sortie pose."""
        numbers = [self.number(f"{field}.{axis}") for axis in ("x", "y", "z", "yaw")]
        if any(n is None for n in numbers):
            return None
        north, east, down, yaw = (n or 0.0 for n in numbers)
        return ned_pose(north, east, down, yaw)


def _check_fields(data: dict[str, Any], where: str, problems: Problems) -> None:
    """Note every field that is not one of MissionBench's where it stands (see ``FIELDS``)."""
    for section, known in FIELDS.items():
        value = _Reader(data, where, problems).optional(section) if section else data
        if not isinstance(value, dict):
            continue
        for key in value:
            if section == "" and str(key).startswith("skip_"):
                continue
            if key not in known:
                field = f"{section}.{key}" if section else str(key)
                allowed = ", ".join(sorted(known))
                problems.add(where, field, f"unknown field (MissionBench's here are: {allowed})")


def _category(reader: _Reader) -> str | None:
    """Return sortie's mission type for ``metadata.task_category``."""
    value = reader.text("metadata.task_category")
    if value is None:
        return None
    kind = CATEGORIES.get(value.lower())
    if kind is None:
        allowed = ", ".join(sorted(CATEGORIES))
        reader.problems.add(
            reader.where, "metadata.task_category", f"{value!r}; allowed: {allowed}"
        )
    return kind


def _tolerances(reader: _Reader) -> dict[str, Any]:
    """Return the step budget, step size and goal tolerances (one for x, y and z)."""
    values = {k: reader.number(f"tolerances.{k}") for k in ("MAX_ACTIONS", "MAX_STEP_SIZE")}
    axes = {k: reader.number(f"tolerances.{k}") for k in ("x", "y", "z", "yaw")}
    if len({axes["x"], axes["y"], axes["z"]}) > 1 and None not in axes.values():
        reader.problems.add(
            reader.where, "tolerances", f"x, y, z differ ({axes}); sortie's missions have one"
        )
    steps = values["MAX_ACTIONS"]
    if steps is not None and steps != int(steps):
        reader.problems.add(reader.where, "tolerances.MAX_ACTIONS", f"{steps} is not whole")
    return {
        "max_steps": int(steps or 0),
        "max_move": values["MAX_STEP_SIZE"],
        "axis_tolerance": axes["x"],
        "yaw_tolerance": axes["yaw"],
    }


def _check_camera(reader: _Reader) -> None:
    """Refuse a camera whose angles differ from sortie's aerial camera (fov 90, pitch -45)."""
    for field, wanted in CAMERA.items():
        value = reader.number(f"camera.{field}")
        if value is not None and value != wanted:
            reader.problems.add(
                reader.where, f"camera.{field}", f"{value:g}; sortie's aerial camera has {wanted:g}"
            )


def _by_type(kind: str, reader: _Reader, config: Path) -> dict[str, Any]:
    """Return what the mission type adds: the expected report, task action or patrol path."""
    if kind == "inspection":
        answer = reader.optional("ground_truth.task_gt")
        return {"answer": str(answer)} if answer not in (None, "") else {}
    if kind == "manipulation":
        word = str(reader.get("ground_truth.task_gt") or "").strip().lower()
        action = TASK_ACTIONS.get(word)
        if action is None and word:
            allowed = ", ".join(TASK_ACTIONS)
            reader.problems.add(
                reader.where, "ground_truth.task_gt", f"{word!r}; allowed: {allowed}"
            )
        return {"task_action": action}
    return {"patrol": _recording(config.parent / RECORDING, reader)}


def _recording(path: Path, reader: _Reader) -> list[list[float]]:
    """Return the human-flown patrol path of ``airsim_rec.txt`` as sortie points."""
    if not path.is_file():
        reader.problems.add(reader.where, RECORDING, "missing (a patrol's reference path)")
        return []
    text = read_text(path, reader.problems, reader.where, RECORDING)
    rows = list(csv.DictReader((text or "").splitlines(), delimiter="\t"))
    points = []
    for number, row in enumerate(rows, start=2):
        where = f"{path}:{number}"
        axes = []
        for column in ("POS_X", "POS_Y", "POS_Z"):
            try:
                axes.append(float(row.get(column) or "nan"))
            except ValueError:
                axes.append(float("nan"))
        bad = [c for c, v in zip(("POS_X", "POS_Y", "POS_Z"), axes, strict=True) if v != v]
        for column in bad:
            reader.problems.add(where, column, f"expected a number, got {row.get(column)!r}")
        if not bad:
            points.append(list(ned_point(*axes)))
    return points
