import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.errors import ParameterError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from sortie.run.sweep import parse_vary, sweep_requests
from sortie.testing.episodes import aerial_hop


def test_a_sweep_makes_one_named_run_per_combination():
    """Two arguments of two values: four runs, each with its setting in its id and args."""
    base = RunRequest(("s",), "mllm-aerial", agent_args={"model": "m"}, run_id="abl")
    requests = sweep_requests(base, parse_vary(["temperature=0,0.7", "history=0,2"]))
    assert [r.run_id for r in requests] == [
        "abl-history=0-temperature=0",
        "abl-history=0-temperature=0.7",
        "abl-history=2-temperature=0",
        "abl-history=2-temperature=0.7",
    ]
    assert requests[1].agent_args == {"model": "m", "history": "0", "temperature": "0.7"}


def test_a_sweep_run_id_replaces_characters_a_file_name_cannot_hold():
    """A value like a model's `org/name` becomes `org_name` in the run id, not a folder."""
    base = RunRequest(("s",), "mllm-aerial", run_id="p")
    [request] = sweep_requests(base, parse_vary(["model=org/name:7b"]))
    assert request.run_id == "p-model=org_name_7b"
    assert request.agent_args == {"model": "org/name:7b"}


@pytest.mark.parametrize("item", ["temperature", "=1,2", "history="])
def test_a_malformed_vary_is_refused(item):
    """Each --vary needs a name and at least one value."""
    with pytest.raises(ParameterError, match="expected name=value1,value2"):
        parse_vary([item])


def test_sweep_runs_every_setting_and_prints_their_table(tmp_path):
    """The random agent with two move limits: two stored runs, one table of both."""
    suite = tmp_path / "hops.jsonl"
    write_suite(
        suite, SuiteHeader(suite="hops"), [aerial_hop(episode_id=f"hops/{i}") for i in range(3)]
    )
    result = CliRunner().invoke(
        app,
        [
            "sweep",
            str(suite),
            "--agent",
            "random",
            "--vary",
            "max_move=2,8",
            "--run-id",
            "r",
            "--store",
            str(tmp_path / "s.db"),
            "--format",
            "markdown",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "| r-max_move=2 | all | 3 |" in result.output
    assert "| r-max_move=8 | all | 3 |" in result.output


def test_sweep_passes_the_run_settings_to_every_run(tmp_path):
    """--clock (like --judge, --setting and --skills) reaches each run's stored config."""
    suite = tmp_path / "hops.jsonl"
    write_suite(suite, SuiteHeader(suite="hops"), [aerial_hop(episode_id="hops/0")])
    words = ["sweep", str(suite), "--agent", "random", "--vary", "max_move=2,8"]
    words += ["--run-id", "r", "--store", str(tmp_path / "s.db"), "--clock", "latency"]
    result = CliRunner().invoke(app, words)
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "s.db") as store:
        assert [store.run_config(run).clock for run in store.runs()] == ["latency"] * 2


class _FailingAgent:
    """An agent with one argument whose every act raises (each episode is an agent_error)."""

    name = "failing"
    sensors: frozenset = frozenset()

    def __init__(self, level: str = "0") -> None:
        """Take a setting to vary."""

    def reset(self, brief, seed) -> None:
        """Accept the episode."""

    def act(self, observation):
        """Fail."""
        raise RuntimeError("broken")


def test_a_sweep_with_a_setting_whose_episodes_all_errored_exits_1(tmp_path, override):
    """Every episode of both settings errors: each run's count is printed and the code is 1."""
    from sortie.agents.base import AGENTS

    override(AGENTS, "failing", _FailingAgent)
    suite = tmp_path / "hops.jsonl"
    write_suite(
        suite, SuiteHeader(suite="hops"), [aerial_hop(episode_id=f"hops/{i}") for i in range(2)]
    )
    result = CliRunner().invoke(
        app,
        [
            "sweep",
            str(suite),
            "--agent",
            "failing",
            "--vary",
            "level=1,2",
            "--run-id",
            "r",
            "--store",
            str(tmp_path / "s.db"),
            "--max-consecutive-errors",
            "0",
        ],
    )
    assert result.exit_code == 1, result.output
    assert result.output.count("2 of 2 episodes ended in an error (agent_error 2)") == 2
