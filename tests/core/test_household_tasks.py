"""Household tasks checked at load: unknown objects, empty keypaths, impossible goals, skills."""

from __future__ import annotations

import json

import pytest

from sortie.core.errors import ConfigError
from sortie.missions.loading import load_suite


def _suite_with(tmp_path, change):
    """Write household-smoke-v1 with its first task's mission changed by ``change``."""
    lines = load_suite("household-smoke-v1")
    header, first = lines.header, lines.episodes[0]
    mission = json.loads(json.dumps(first.mission))
    change(mission)
    episode = first.model_dump(mode="json") | {"mission": mission}
    path = tmp_path / "tasks.jsonl"
    path.write_text(header.model_dump_json() + "\n" + json.dumps(episode) + "\n")
    return path


@pytest.mark.parametrize(
    ("change", "field", "found"),
    [
        (
            lambda m: m["keypaths"][0][0].update(target="unicorn_0"),
            "keypaths.0.0.target",
            "unknown object 'unicorn_0'",
        ),
        (lambda m: m["keypaths"].__setitem__(0, []), "keypaths.0", "at least 1 item"),
        (lambda m: m.__setitem__("keypaths", []), "keypaths", "at least 1 item"),
        (
            lambda m: m["goals"].append({"relation": "open", "object": m["goals"][0]["object"]}),
            "goals.1.object",
            "expected: container",
        ),
        (
            lambda m: m["goals"].append(dict(m["goals"][0], place=m["goals"][0]["place"])),
            "goals.1",
            "already has a place",
        ),
        (lambda m: m["expert"].pop(), "expert", "must end with end"),
        (
            lambda m: m["expert"][0].update(skill="grasp"),
            "expert.0.skill",
            "'grasp' is not made for go_to",
        ),
        (
            lambda m: m["expert"][0].update(skill="teleport"),
            "expert.0.skill",
            "'teleport' is not an offered skill",
        ),
    ],
)
def test_a_bad_task_is_refused_with_file_line_and_field(tmp_path, change, field, found):
    """The error names the file, the line, the field and what was found."""
    path = _suite_with(tmp_path, change)
    with pytest.raises(ConfigError) as error:
        load_suite(path)
    message = str(error.value)
    assert str(path) in message and ":2" in message
    assert field in message and found in message
