import shutil
from pathlib import Path

import pytest

from sortie.core.errors import ConfigError
from sortie.importers import import_command
from sortie.importers.missionbench import import_missionbench
from sortie.missions.aerial.spec import aerial_data
from sortie.missions.loading import load_suite

DATASET = Path(__file__).parents[2] / "docs" / "examples" / "missionbench" / "dataset"


def _by_name(episodes) -> dict:
    return {e.episode_id.rsplit("/", 1)[-1]: e for e in episodes}


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DATASET, tmp_path / "dataset"))


def _edit(config: Path, old: str, new: str) -> None:
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new))


def test_the_imported_suite_loads_through_sorties_loader(tmp_path):
    """`import missionbench` writes three aerial missions that load_suite reads back."""
    out = tmp_path / "mb.jsonl"
    assert import_command("missionbench", [DATASET], out, None) == 3
    suite = load_suite(str(out))
    assert sorted(e.level for e in suite.episodes) == ["inspection", "manipulation", "patrol"]
    assert suite.header.settings["backend"] == "airsim"


def test_ned_poses_are_converted_to_sorties_frame():
    """drone_start_pose (10, 20, -30, yaw 90) starts at (10, -20, 30) with yaw -90."""
    _, episodes = import_missionbench([DATASET], "mb")
    assert _by_name(episodes)["fountain_mission1"].start.as_list() == pytest.approx(
        [10.0, -20.0, 30.0, -90.0]
    )


def test_an_inspection_keeps_its_expected_report():
    """The inspection's task_gt becomes the answer the report is judged against."""
    _, episodes = import_missionbench([DATASET], "mb")
    assert aerial_data(_by_name(episodes)["fountain_mission1"]).answer == "It is a stone fountain"


def test_a_manipulation_drop_asks_for_drop_payload():
    """task_gt 'drop' becomes the drop_payload task action."""
    _, episodes = import_missionbench([DATASET], "mb")
    data = aerial_data(_by_name(episodes)["helipad_mission2"])
    assert data.task_action == "drop_payload"


def test_a_patrol_reads_its_path_from_the_recording():
    """The three rows of airsim_rec.txt become the patrol path, converted from NED."""
    _, episodes = import_missionbench([DATASET], "mb")
    patrol = aerial_data(_by_name(episodes)["ring_road_mission1"]).patrol
    assert patrol == [[5.0, -5.0, 40.0], [25.0, -5.0, 40.0], [25.0, -45.0, 41.0]]


def test_budgets_and_tolerances_come_from_the_mission():
    """MAX_ACTIONS 50, MAX_STEP_SIZE 20, 5 m and 15 degrees for the patrol."""
    _, episodes = import_missionbench([DATASET], "mb")
    data = aerial_data(_by_name(episodes)["ring_road_mission1"])
    assert (data.max_steps, data.max_move, data.axis_tolerance, data.yaw_tolerance) == (
        50,
        20.0,
        5.0,
        15.0,
    )


def test_the_seed_ids_are_kept_in_the_world():
    """The world is airsim.NHEnv and names the mission and its annotated depth."""
    _, episodes = import_missionbench([DATASET], "mb")
    world = _by_name(episodes)["helipad_mission2"].world
    assert world.builder == "airsim.NHEnv"
    assert (world.params["mission"], world.params["gt_depth"]) == ("helipad_mission2", 30.0)


def test_every_bad_mission_is_reported_by_folder_and_field(tmp_path):
    """A missing waypoint axis in one folder and a bad category in another are both listed."""
    dataset = _copy(tmp_path)
    inspection = dataset / "Visual_Inspection" / "NHEnv" / "fountain_mission1"
    manipulation = dataset / "Manipulation" / "NHEnv" / "helipad_mission2"
    _edit(inspection / "mission_config.yaml", "    yaw: 45.0\n", "")
    _edit(manipulation / "mission_config.yaml", "task_category: manipulation", "task_category: x")
    with pytest.raises(ConfigError) as caught:
        import_missionbench([dataset], "mb")
    message = str(caught.value)
    assert f"{inspection}: ground_truth.waypoint_gt.yaw: missing" in message
    assert f"{manipulation}: metadata.task_category: 'x'; allowed" in message


def test_a_patrol_without_its_recording_is_refused(tmp_path):
    """A patrol folder without airsim_rec.txt is reported, not imported without a path."""
    dataset = _copy(tmp_path)
    (dataset / "Patrol" / "NHEnv" / "ring_road_mission1" / "airsim_rec.txt").unlink()
    with pytest.raises(ConfigError, match=r"ring_road_mission1: airsim_rec\.txt: missing"):
        import_missionbench([dataset], "mb")


def test_a_bad_recording_row_is_reported_with_its_line(tmp_path):
    """A non-number POS_Y on the recording's third line names file:3 and the column."""
    dataset = _copy(tmp_path)
    recording = dataset / "Patrol" / "NHEnv" / "ring_road_mission1" / "airsim_rec.txt"
    _edit(recording, "25.0\t5.0\t-40.0", "25.0\tfive\t-40.0")
    with pytest.raises(ConfigError, match=rf"{recording}:3: POS_Y: expected a number"):
        import_missionbench([dataset], "mb")


def test_another_camera_pitch_is_refused(tmp_path):
    """A camera pitched -30 degrees is refused: sortie's aerial camera looks 45 down."""
    dataset = _copy(tmp_path)
    config = dataset / "Manipulation" / "NHEnv" / "helipad_mission2" / "mission_config.yaml"
    _edit(config, "pitch: -45.0", "pitch: -30.0")
    with pytest.raises(ConfigError, match=r"camera\.pitch: -30; sortie's aerial camera has -45"):
        import_missionbench([dataset], "mb")


def test_a_folder_without_missions_is_refused(tmp_path):
    """An empty folder is an error, not an empty suite."""
    with pytest.raises(ConfigError, match="no mission folder found"):
        import_missionbench([tmp_path], "mb")


def test_a_misplaced_or_unknown_field_is_refused_like_rescuebench_does(tmp_path):
    """A top-level task_gt (it belongs in ground_truth) and a typo in tolerances are named."""
    dataset = _copy(tmp_path)
    inspection = dataset / "Visual_Inspection" / "NHEnv" / "fountain_mission1"
    config = inspection / "mission_config.yaml"
    config.write_text(config.read_text() + "task_gt: It is a fountain\n")
    _edit(config, "MAX_ACTIONS", "MAX_ACTION")
    with pytest.raises(ConfigError) as caught:
        import_missionbench([dataset], "mb")
    message = str(caught.value)
    assert f"{inspection}: task_gt: unknown field (MissionBench's here are:" in message
    assert f"{inspection}: tolerances.MAX_ACTION: unknown field" in message
