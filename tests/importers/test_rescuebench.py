import json
from pathlib import Path

import pytest

from sortie.backends.catalog import refusal
from sortie.core.errors import ConfigError
from sortie.importers import import_command
from sortie.importers.rescuebench import import_rescuebench
from sortie.missions.loading import load_suite
from sortie.run.jobs import backend_needs

FIXTURE = Path(__file__).parents[2] / "docs" / "examples" / "rescuebench" / "level_2.jsonl"


def _rows() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def _write(tmp_path: Path, rows: list, name: str = "level_2.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_the_imported_suite_loads_through_sorties_loader(tmp_path):
    """`import rescuebench` writes a suite that load_suite reads back, two L3 episodes."""
    out = tmp_path / "rb.jsonl"
    assert import_command("rescuebench", [FIXTURE], out, None) == 2
    suite = load_suite(str(out))
    assert [e.level for e in suite.episodes] == ["L3", "L3"]
    assert suite.header.settings["backend"] == "unrealcv"


def test_the_seed_ids_are_kept_in_the_world():
    """The second line keeps env_id, code level 2, point 1 and its reference image."""
    _, episodes = import_rescuebench([FIXTURE], "rb")
    world = episodes[1].world
    assert (world.builder, episodes[1].episode_id) == ("unreal.Downtown", "rb/L3-0001")
    assert world.params == {
        "env_id": "UnrealRescue-Downtown",
        "code_level": 2,
        "point": 1,
        "reference_image": "Downtown_2_1.png",
        "injured_agent_id": "7",
    }


def test_the_clue_text_is_kept():
    """The first episode's clue is its reference_text's one string."""
    _, episodes = import_rescuebench([FIXTURE], "rb")
    assert episodes[0].mission["clue_text"] == _rows()[0]["reference_text"][0]


def test_locations_are_converted_from_unreal_centimetres():
    """agent_loc [1200, -350, 90, 0, 90, 0] starts at (12, 3.5, 0.9) facing yaw -90."""
    _, episodes = import_rescuebench([FIXTURE], "rb")
    assert episodes[0].start.as_list() == pytest.approx([12.0, 3.5, 0.9, -90.0])


def test_the_distances_are_straight_line_lower_bounds():
    """Start (0,0) -> casualty (0,-10) -> stretcher (3,0): d 10 m, L 10 + sqrt(109) m."""
    _, episodes = import_rescuebench([FIXTURE], "rb")
    mission = episodes[1].mission
    assert (mission["path_distance"], mission["shortest_length"]) == pytest.approx(
        (10.0, 10.0 + 109**0.5), abs=1e-3
    )


def test_every_bad_line_is_reported_with_file_line_and_field(tmp_path):
    """A missing timeout on line 1 and a bad level on line 2 are both reported."""
    first, second = _rows()
    del first["timeout"]
    second["level"] = 7
    path = _write(tmp_path, [first, second])
    with pytest.raises(ConfigError) as caught:
        import_rescuebench([path], "rb")
    message = str(caught.value)
    assert f"{path}:1: timeout: missing" in message
    assert f"{path}:2: level: expected a code level 0-4" in message


def test_a_line_of_another_level_than_its_file_is_refused(tmp_path):
    """A level 1 line in level_2.jsonl is refused naming the file's level."""
    row = _rows()[0] | {"level": 1}
    with pytest.raises(ConfigError, match=r":1: level: 1, but the file is level_2\.jsonl"):
        import_rescuebench([_write(tmp_path, [row])], "rb")


def test_an_unknown_field_is_refused_not_dropped(tmp_path):
    """An extra field would be lost in the conversion, so it is reported."""
    row = _rows()[0] | {"weather": "rain"}
    with pytest.raises(ConfigError, match=r":1: weather: unknown field"):
        import_rescuebench([_write(tmp_path, [row])], "rb")


def test_a_location_with_five_numbers_is_refused(tmp_path):
    """stretcher_loc of five numbers is reported by field with the layout expected."""
    row = _rows()[0] | {"stretcher_loc": [0, 0, 0, 0, 0]}
    with pytest.raises(ConfigError, match=r"stretcher_loc: expected \[x, y, z, roll, yaw, pitch\]"):
        import_rescuebench([_write(tmp_path, [row])], "rb")


def test_an_env_id_without_the_rescue_prefix_is_refused(tmp_path):
    """env_id 'Forglar_Map' is refused: the map is read from 'UnrealRescue-<Map>'."""
    row = _rows()[0] | {"env_id": "Forglar_Map"}
    with pytest.raises(ConfigError, match=r"env_id: expected 'UnrealRescue-<Map>'"):
        import_rescuebench([_write(tmp_path, [row])], "rb")


def test_a_multi_agent_level_file_is_refused_in_one_line(tmp_path):
    """RescueBench's multi-agent file gets one line saying why, not one per episode."""
    rows = [r | {"env_id": r["env_id"].replace("Rescue-", "RescueMultiAgent-")} for r in _rows()]
    path = _write(tmp_path, rows, "level_for_multiagent.jsonl")
    with pytest.raises(ConfigError) as refused:
        import_rescuebench([path], "rb")
    message = str(refused.value)
    assert message.count("multi-agent episodes (UnrealRescueMultiAgent-<Map>)") == 1
    assert f"{path}:1" not in message  # no line-by-line echo of the same refusal


def test_a_bad_file_writes_no_suite(tmp_path):
    """A file with a broken line leaves no suite file behind."""
    out = tmp_path / "rb.jsonl"
    with pytest.raises(ConfigError, match="not JSON"):
        import_command("rescuebench", [_write(tmp_path, ["{oops"])], out, None)
    assert not out.exists()


def test_the_embedded_backend_refuses_an_imported_episode():
    """Running the imported suite on the embedded backend is refused naming the map."""
    _, episodes = import_rescuebench([FIXTURE], "rb")
    needs = backend_needs("rescue", (), {e.world.builder for e in episodes})
    reason = refusal("embedded", needs)
    assert reason is not None and "'unreal.Downtown' is a map of an external simulator" in reason


def test_a_file_that_is_not_utf8_or_a_folder_is_reported_not_raised(tmp_path):
    """Undecodable bytes and a folder given as a file are problems listed by file."""
    bad = tmp_path / "level_1.jsonl"
    bad.write_bytes(b"\xff\xfe{}\n")
    folder = tmp_path / "level_3.jsonl"
    folder.mkdir()
    with pytest.raises(ConfigError) as caught:
        import_rescuebench([bad, folder], "rb")
    message = str(caught.value)
    assert f"{bad}: file: not UTF-8 text" in message and f"{folder}: file: cannot read" in message
