import shutil
from pathlib import Path

from typer.testing import CliRunner

from sortie.cli import app

runner = CliRunner()


def test_backends_lists_each_backend_with_what_it_supports():
    """`sortie backends` names the embedded backend, its flight support and an argument."""
    result = runner.invoke(app, ["backends"])
    assert result.exit_code == 0, result.output
    assert "embedded" in result.output and "control_period" in result.output


def test_run_with_an_unknown_backend_fails_with_exit_code_2(tmp_path, smoke3):
    """`sortie run --backend embeded` is refused with the near name, before any episode."""
    result = runner.invoke(
        app,
        ["run", str(smoke3), "--agent", "random", "--store", str(tmp_path / "s.db")]
        + ["--backend", "embeded"],
    )
    assert result.exit_code == 2
    assert "Unknown backend 'embeded'" in result.output and "Did you mean" in result.output


def test_run_passes_b_arguments_to_the_backend_check(tmp_path, smoke3):
    """`-b visible_pixel=3` is refused naming the argument the embedded backend takes."""
    result = runner.invoke(
        app,
        ["run", str(smoke3), "--agent", "random", "--store", str(tmp_path / "s.db")]
        + ["-b", "visible_pixel=3"],
    )
    assert result.exit_code == 2
    assert "Did you mean 'visible_pixels'" in result.output


def test_import_rescuebench_writes_the_suite_and_says_how_many(tmp_path):
    """`sortie import rescuebench FILE --out S` writes S and reports two episodes."""
    fixture = Path(__file__).parents[2] / "docs" / "examples" / "rescuebench" / "level_2.jsonl"
    out = tmp_path / "rb.jsonl"
    result = runner.invoke(app, ["import", "rescuebench", str(fixture), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Wrote 2 episodes" in result.output and out.is_file()
    assert "only that simulator plays them" in result.output
    assert f"sortie run {out} --agent NAME --backend unrealcv" in " ".join(result.output.split())


def test_an_emmoe_import_runs_here_and_says_nothing_of_another_simulator(tmp_path):
    """EMMOE's tasks are placed on sortie's apartments: no word of another backend."""
    # A task placed and one skipped give every line the import prints; all six took 20 s.
    sample = Path(__file__).parents[2] / "docs" / "examples" / "emmoe"
    for task in ("train/2", "test/93"):
        shutil.copytree(sample / "EMMOE-100" / "data" / task, tmp_path / "data" / task)
    shutil.copy(sample / "name_dict.txt", tmp_path)
    result = runner.invoke(
        app, ["import", "emmoe", str(tmp_path / "data"), "--out", str(tmp_path / "e.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert "Skipped task 93" in result.output and "Wrote 1 episodes" in result.output
    assert "--backend" not in result.output


def test_import_of_an_unknown_source_fails_with_exit_code_2(tmp_path):
    """`sortie import rescubench` names the near importer."""
    result = runner.invoke(
        app, ["import", "rescubench", str(tmp_path), "--out", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 2 and "Did you mean 'rescuebench'" in result.output
