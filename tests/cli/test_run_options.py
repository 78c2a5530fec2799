from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from typer.testing import CliRunner

from sortie.cli.common import grouped_options
from sortie.cli.run_options import RunOptions, SingleRunOptions

runner = CliRunner()


def test_run_options_become_the_request_with_parsed_lists():
    """The k=v lists become dicts, an old family flag joins -F, the episode ids a tuple."""
    options = RunOptions(
        ["a.jsonl"],
        "oracle",
        agent_arg=["k=v"],
        family_setting=["clock=x"],
        judge="llm",
        episodes="e/1, e/2",
        backend_arg=["port=9"],
    )
    request = options.request("mine")
    assert (request.suites, request.agent, request.run_id) == (("a.jsonl",), "oracle", "mine")
    assert request.agent_args == {"k": "v"} and request.backend_args == {"port": "9"}
    assert request.family_settings == {"clock": "x", "judge": "llm"}
    assert request.episodes == ("e/1", "e/2")


def test_single_run_options_carry_the_run_only_flags_into_the_request():
    """`sortie run`'s own flags (seed, records folder, executor, ...) reach its request."""
    options = SingleRunOptions(["s"], "random", seed=7, out=Path("o"), record_frames=True)
    request = options.request(None)
    assert (request.seed, request.out, request.record_frames) == (7, Path("o"), True)
    assert request.executor == "local" and request.run_id is None


@dataclass(frozen=True, slots=True)
class Pair:
    """A record of two flags, for the test below."""

    name: Annotated[str, typer.Option(help="A name.")]
    times: Annotated[int, typer.Option(help="How often.")] = 2


def test_a_grouped_record_is_spread_into_flags_and_built_from_them():
    """A command taking a record shows its fields as flags and gets the record they build."""
    app = typer.Typer()
    got = []

    @app.command()
    @grouped_options
    def say(pair: Pair, loud: Annotated[bool, typer.Option()] = False) -> None:
        got.append((pair, loud))

    result = runner.invoke(app, ["--name", "x", "--loud"])
    assert result.exit_code == 0, result.output
    assert got == [(Pair("x", 2), True)]
    assert "--times" in runner.invoke(app, ["--help"]).output


def test_pose_flags_become_the_pose_settings():
    """--pose-frame start --pose-noise 0.2,3 asks for that frame and those deviations."""
    request = RunOptions(["s"], "a", pose_frame="start", pose_noise="0.2,3").request(None)
    assert request.pose is not None
    assert (request.pose.frame, request.pose.position_noise, request.pose.heading_noise) == (
        "start",
        0.2,
        3.0,
    )


def test_a_negative_pose_noise_exits_with_one_line():
    """A run asked for a negative noise stops before anything runs, naming the flags."""
    from sortie.cli import app

    result = runner.invoke(
        app, ["run", "rescue-smoke-v2", "--agent", "random", "--pose-noise", "-1"]
    )
    assert result.exit_code == 2
    assert "--pose-frame/--pose-noise: position_noise '-1'" in result.output


def test_an_unknown_camera_preset_exits_with_one_line(tmp_path):
    """--camera with no such preset lists the presets and the syntax."""
    from sortie.cli import app

    result = runner.invoke(
        app,
        [
            "run",
            "rescue-smoke-v2",
            "--agent",
            "random",
            "--camera",
            "imax",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2
    assert "--camera: 'imax' is not a preset" in result.output
    assert "rescuebench" in result.output


def test_a_report_title_never_carries_escape_bytes():
    """A run id holding an escape sequence is titled with the escape written out."""
    from sortie.cli.common import report_title

    for fmt in ("table", "markdown"):
        title = report_title("run\x1b[2J", fmt)
        assert "\x1b" not in title and "\\x1b" in title
