from typer.testing import CliRunner

from sortie.cli import app

runner = CliRunner()


def test_unknown_generate_target_is_refused():
    """`generate` refuses a target other than rescue, aerial, household or suites (exit 2)."""
    result = runner.invoke(app, ["generate", "kitchen"])
    assert result.exit_code == 2
    assert "allowed: rescue, aerial, household, suites" in result.output


def test_generate_writes_a_family_suite_through_its_generator(tmp_path):
    """`sortie generate rescue --level L1` writes the file that rescue's generator makes."""
    out = tmp_path / "mine.jsonl"
    args = ["generate", "rescue", "--level", "L1", "--world", "flexible_room", "--count", "1"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists() and "1 episodes" in result.output
