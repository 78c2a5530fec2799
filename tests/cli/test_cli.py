from PIL import Image
from typer.testing import CliRunner

from sortie.cli import app
from sortie.sim.worlds import WORLDS

runner = CliRunner()


def test_worlds_lists_every_builder():
    """`sortie worlds` names every registered builder."""
    result = runner.invoke(app, ["worlds"])
    assert result.exit_code == 0
    for name in ("flexible_room", "suburb", "forest", "street", "campus", "tower", "station"):
        assert name in WORLDS and name in result.output


def test_view_writes_the_four_images(tmp_path):
    """`sortie view` writes rgb, depth, semantic and top-down pictures of the asked size."""
    result = runner.invoke(app, ["view", "flexible_room", "--size", "64", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("rgb", "depth", "semantic"):
        assert Image.open(tmp_path / f"{name}.png").size == (64, 64)
    assert (tmp_path / "topdown.png").exists()


def test_view_refuses_a_pose_inside_a_wall(tmp_path):
    """A pose inside the room's wall is a clear error with exit code 2, and nothing is drawn."""
    result = runner.invoke(app, ["view", "flexible_room", "--pose", "7,0,0,0", "--out",
                                 str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2
    assert "inside 'wall_1'" in result.output and not (tmp_path / "rgb.png").exists()


def test_view_suggests_a_builder_for_a_typo(tmp_path):
    """A misspelt world name gets a suggestion."""
    result = runner.invoke(app, ["view", "towr", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "Did you mean 'tower'?" in result.output


def test_view_rejects_a_malformed_param(tmp_path):
    """A --param without '=' says what form it expects."""
    result = runner.invoke(app, ["view", "tower", "-p", "floors", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "expected key=value" in result.output


def test_run_prints_the_level_table_and_writes_records(tmp_path):
    """`sortie run FILE --agent oracle` prints TCR 100 for L1 and writes one record each."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "hand.jsonl"
    write_suite(suite, SuiteHeader(suite="hand"), [room_rescue("h/0")])
    result = runner.invoke(app, ["run", str(suite), "--agent", "oracle", "--out",
                                 str(tmp_path / "runs"), "--store",
                                 str(tmp_path / "sortie.db")])  # fmt: skip
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "L1" in line)
    assert row.split("│")[6].strip() == "100"  # level, n, success, failure, error, TCR
    assert len(list((tmp_path / "runs" / "hand" / "oracle").glob("*.jsonl"))) == 1


def test_run_with_an_unknown_agent_suggests_one(tmp_path):
    """A misspelt agent name gets a suggestion."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "hand.jsonl"
    write_suite(suite, SuiteHeader(suite="hand"), [room_rescue("h/0")])
    result = runner.invoke(app, ["run", str(suite), "--agent", "oracel", "--store",
                                 str(tmp_path / "sortie.db")])  # fmt: skip
    assert result.exit_code == 2 and "Did you mean 'oracle'?" in result.output


def test_run_resumes_a_run_id_and_prints_the_whole_table(tmp_path):
    """A second `sortie run` with the same --run-id runs nothing and prints the stored table."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "hand.jsonl"
    write_suite(suite, SuiteHeader(suite="hand"), [room_rescue("h/0")])
    command = ["run", str(suite), "--agent", "random", "--run-id", "r", "--store",
               str(tmp_path / "s.db")]  # fmt: skip
    assert runner.invoke(app, command).exit_code == 0
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "1 of 1 episodes already stored" in result.output
    row = next(line for line in result.output.splitlines() if "all" in line)
    assert row.split("│")[2].strip() == "1"
    changed = runner.invoke(app, [*command, "--seed", "1"])
    assert changed.exit_code == 2 and "seed: stored 0, given 1" in changed.output


def test_run_refuses_zero_workers(tmp_path):
    """--workers 0 is a clear error naming the option."""
    result = runner.invoke(app, ["run", "rescue-smoke-v1", "--agent", "random", "--workers", "0",
                                 "--store", str(tmp_path / "s.db")])  # fmt: skip
    assert result.exit_code == 2 and "--workers must be at least 1, got 0" in result.output
