"""RescueBench's test episodes (``level_<L>.jsonl``) as a rescue suite for the ``unrealcv`` backend.

One JSON object per line; the point index is the line's 0-based index in its file, and code
levels 0–4 are the paper's L1–L5. Each episode's world is ``unreal.<Map>`` (the map of its
``env_id``), with the seed's ids (``env_id``, ``code_level``, ``point``), the casualty's
appearance id and the reference image's file name in the world's parameters. Locations are
converted from Unreal centimetres (left-handed) by ``sortie.backends.frames``.

RescueBench gives no walkable distances: ``path_distance`` and ``shortest_length`` are the
straight-line (XY) lower bounds start → casualty and start → casualty → stretcher, and the
reference view is the casualty's own pose at eye height (the simulator's backend shows the
stored reference image instead).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sortie.backends.frames import unreal_pose
from sortie.core.episode import EpisodeSpec, Placement, WorldSpec, check_name
from sortie.core.errors import ParameterError
from sortie.core.pose import Pose
from sortie.core.records_io import SuiteHeader
from sortie.importers.problems import Problems, read_text

BACKEND = "unrealcv"
"""The backend the imported suite is for (stated in the suite header)."""
WORLD_PREFIX = "unreal."
ENV_PREFIX = "UnrealRescue-"
LOCATIONS = ("agent_loc", "injured_player_loc", "stretcher_loc", "ambulance_loc")
FIELDS = frozenset(
    {*LOCATIONS, "env_id", "level", "injured_agent_id", "reference_text"}
    | {"reference_image_path", "timeout"}
)
EYE_HEIGHT = 1.6
"""Metres above the casualty's base the reference view is put at."""
_FILE_LEVEL = re.compile(r"level_(\d+)\.jsonl")
MULTI_AGENT = "UnrealRescueMultiAgent-"
"""How a RescueBench multi-agent level file's env_id begins (``level_for_multiagent.jsonl``)."""


def import_rescuebench(paths: Sequence[Path], suite: str) -> tuple[SuiteHeader, list[EpisodeSpec]]:
    """Return the suite header and episodes of RescueBench files ``paths``.

    Raises:
        ConfigError: every problem found, as ``file:line: field: problem``; nothing converted.
    """
    problems = Problems("rescuebench")
    check_name(suite, "suite name")
    episodes: list[EpisodeSpec] = []
    for path in paths:
        episodes += _read_file(path, suite, problems)
    _duplicates(episodes, problems)
    problems.raise_if_any()
    header = SuiteHeader(
        suite=suite,
        generator="sortie.importers.rescuebench",
        generator_version="1",
        settings={"backend": BACKEND, "source": "rescuebench", "files": [p.name for p in paths]},
    )
    return header, episodes


def _read_file(path: Path, suite: str, problems: Problems) -> list[EpisodeSpec]:
    """Return the episodes of one level file, noting every problem of its lines."""
    expected = _FILE_LEVEL.fullmatch(path.name)
    episodes: list[EpisodeSpec] = []
    text = read_text(path, problems, str(path), "file")
    if text and f'"{MULTI_AGENT}' in text:
        # Every line would fail alike on its env_id; one line says why the file cannot be read.
        problems.add(
            str(path),
            "env_id",
            f"multi-agent episodes ({MULTI_AGENT}<Map>) are not supported: sortie's rescue "
            "missions have one rescuer; import RescueBench's single-agent level files",
        )
        return episodes
    for index, line in enumerate((text or "").splitlines()):
        where = f"{path}:{index + 1}"
        if not line.strip():
            problems.add(where, "line", "empty line (the point index is the line's index)")
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            problems.add(where, "line", f"not JSON ({error.msg})")
            continue
        if not isinstance(row, dict):
            problems.add(where, "line", f"expected an object, got {type(row).__name__}")
            continue
        level = expected and int(expected.group(1))
        spec = _episode(row, index, suite, where, level, problems)
        episodes += [spec] if spec else []
    return episodes


def _episode(
    row: dict[str, Any],
    point: int,
    suite: str,
    where: str,
    file_level: int | None,
    problems: Problems,
) -> EpisodeSpec | None:
    """Return one line's episode, or None after noting what is wrong with it."""
    before = len(problems.found)
    for name in sorted(FIELDS - set(row)):
        problems.add(where, name, "missing")
    for name in sorted(set(row) - FIELDS):
        problems.add(where, name, f"unknown field (RescueBench's are: {', '.join(sorted(FIELDS))})")
    if len(problems.found) > before:
        return None
    level = _level(row["level"], file_level, where, problems)
    world_map = _map(row["env_id"], where, problems)
    poses = {name: _location(row[name], where, name, problems) for name in LOCATIONS}
    clue = _single_text(row["reference_text"], where, "reference_text", problems)
    image = _single_text(row["reference_image_path"], where, "reference_image_path", problems)
    budget = problems.number(where, "timeout", row["timeout"])
    appearance = row["injured_agent_id"]
    if not isinstance(appearance, int | str) or isinstance(appearance, bool):
        problems.add(where, "injured_agent_id", f"expected an id, got {appearance!r}")
    if len(problems.found) > before:
        return None
    assert level is not None and world_map and clue is not None and image is not None
    placed = {name: pose for name, pose in poses.items() if pose is not None}

    def make() -> EpisodeSpec:
        return _spec(suite, point, level, world_map, row, placed, clue, image, budget or 0.0)

    return problems.checked(where, make)


def _spec(
    suite: str,
    point: int,
    level: int,
    world_map: str,
    row: dict[str, Any],
    poses: dict[str, Pose],
    clue: str,
    image: str,
    budget: float,
) -> EpisodeSpec:
    """Return the episode of one checked line."""
    start, casualty = poses["agent_loc"], poses["injured_player_loc"]
    stretcher = poses["stretcher_loc"]
    to_casualty = math.dist(start.position()[:2], casualty.position()[:2])
    onwards = math.dist(casualty.position()[:2], stretcher.position()[:2])
    params: dict[str, float | int | str] = {
        "env_id": str(row["env_id"]),
        "code_level": level,
        "point": point,
        "reference_image": image,
        "injured_agent_id": str(row["injured_agent_id"]),
    }
    return EpisodeSpec(
        episode_id=f"{suite}/L{level + 1}-{point:04d}",
        family="rescue",
        level=f"L{level + 1}",
        world=WorldSpec(builder=f"{WORLD_PREFIX}{world_map}", seed=0, params=params),
        start=start,
        placements=[
            Placement(
                asset="person",
                name="casualty",
                pose=casualty,
                attributes={"appearance": str(row["injured_agent_id"])},
            ),
            Placement(asset="stretcher", name="stretcher", pose=stretcher),
            Placement(asset="ambulance", name="ambulance", pose=poses["ambulance_loc"]),
        ],
        targets={"casualty": "casualty", "stretcher": "stretcher", "ambulance": "ambulance"},
        mission={
            "clue_text": clue,
            "reference_view": [casualty.x, casualty.y, casualty.z + EYE_HEIGHT, casualty.yaw, 0.0],
            "budget_s": budget,
            "path_distance": round(to_casualty, 3),
            "shortest_length": round(to_casualty + onwards, 3),
        },
    )


def _level(value: Any, file_level: int | None, where: str, problems: Problems) -> int | None:
    """Return the code level 0–4, checked against the file's ``level_<L>`` name."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4:
        problems.add(where, "level", f"expected a code level 0-4 (paper L1-L5), got {value!r}")
        return None
    if file_level is not None and value != file_level:
        problems.add(where, "level", f"{value}, but the file is level_{file_level}.jsonl")
        return None
    return value


def _map(env_id: Any, where: str, problems: Problems) -> str | None:
    """Return the map name of ``UnrealRescue-<Map>``."""
    if not isinstance(env_id, str) or not env_id.startswith(ENV_PREFIX):
        problems.add(where, "env_id", f"expected '{ENV_PREFIX}<Map>', got {env_id!r}")
        return None
    try:
        return check_name(env_id.removeprefix(ENV_PREFIX), "map name")
    except ParameterError as error:
        problems.add(where, "env_id", str(error))
        return None


def _location(value: Any, where: str, field: str, problems: Problems) -> Pose | None:
    """Return ``[x, y, z, roll, yaw, pitch]`` (cm, degrees) as a sortie pose (yaw only)."""
    if not isinstance(value, list) or len(value) != 6:
        problems.add(where, field, f"expected [x, y, z, roll, yaw, pitch], got {value!r}")
        return None
    numbers = [problems.number(where, f"{field}[{i}]", v) for i, v in enumerate(value)]
    if any(n is None for n in numbers):
        return None
    x, y, z, _, yaw, _ = (n or 0.0 for n in numbers)
    return unreal_pose(x, y, z, yaw)


def _single_text(value: Any, where: str, field: str, problems: Problems) -> str | None:
    """Return the one string of a one-string list (RescueBench wraps texts in lists)."""
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], str):
        problems.add(where, field, f"expected a list of one string, got {value!r}"[:200])
        return None
    return value[0]


def _duplicates(episodes: list[EpisodeSpec], problems: Problems) -> None:
    """Note episode ids given twice (the same level file passed twice, say)."""
    seen: set[str] = set()
    for spec in episodes:
        if spec.episode_id in seen:
            problems.add(spec.episode_id, "episode_id", "given twice (a file passed twice?)")
        seen.add(spec.episode_id)
