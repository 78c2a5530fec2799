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
