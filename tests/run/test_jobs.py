from pathlib import Path

import pytest

from sortie.core.episode import NAME_LIMIT, check_name
from sortie.core.errors import ConfigError, ParameterError
from sortie.missions.loading import load_suite
from sortie.run.jobs import RunSpec, check_agent_args, make_jobs, record_path


@pytest.mark.parametrize(
    "name", ["rescue-smoke-v2", "abl-history=0-temperature=0.7", "a_b.c", "x" * NAME_LIMIT]
)
def test_safe_names_are_accepted(name):
    """Letters, digits and . _ - = up to the limit pass unchanged."""
    assert check_name(name, "run id") == name


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("../x", "use only letters"),
        ("/etc", "use only letters"),
        (".hidden", "use only letters"),
        ("a\x00b", "use only letters"),
        ("a b", "use only letters"),
        ("", "use only letters"),
        ("x" * (NAME_LIMIT + 1), f"longer than {NAME_LIMIT} characters"),
    ],
)
def test_unsafe_names_are_refused_saying_why(name, says):
    """Path parts, NUL bytes, spaces, a leading dot, emptiness and length are each refused."""
    with pytest.raises(ParameterError, match=says):
        check_name(name, "run id")


def test_a_long_name_is_shortened_in_the_message():
    """A 300-character id is quoted by its start and length, not in full."""
    with pytest.raises(ParameterError) as info:
        check_name("y" * 300, "--run-id")
    assert "(300 characters)" in str(info.value) and "y" * 100 not in str(info.value)


def test_a_record_path_joins_the_id_parts_inside_its_folder(tmp_path):
    """`suite/0001`, repeat 2, is recorded as `suite__0001__r2.jsonl` in the folder."""
    assert record_path(tmp_path, "suite/0001", 2) == tmp_path / "suite__0001__r2.jsonl"


@pytest.mark.parametrize("episode_id", ["../../outside", "/etc/passwd", "a/../b", "a/.x"])
def test_an_episode_id_that_would_leave_the_folder_is_refused(tmp_path, episode_id):
    """Ids with `..`, a leading `/` or a hidden part cannot name a record file."""
    with pytest.raises(ParameterError, match="episode id"):
        record_path(tmp_path / "records", episode_id, 0)
    assert not Path(tmp_path / "records").exists()


def test_a_missing_required_agent_argument_is_named():
    """An agent whose constructor needs `marker` is refused without it, naming it."""
    from sortie.testing.agents import DyingAgent

    with pytest.raises(ParameterError, match=r"agent 'dying' needs the argument\(s\) marker"):
        check_agent_args("dying", DyingAgent, {})


def test_an_agent_taking_any_keyword_still_refuses_one_it_cannot_use():
    """explorer-nomem takes **kwargs; an unknown one is a ParameterError, not a TypeError."""
    with pytest.raises(ParameterError, match="agent 'explorer-nomem'"):
        RunSpec.resolve("explorer-nomem", {"colour": "red"}, family="rescue")


def test_resolve_refuses_a_backend_that_cannot_run_the_family():
    """An aerial run on a walker-only backend is refused while the run's parts are resolved."""
    from sortie.backends import BACKENDS
    from sortie.backends.catalog import Capabilities
    from sortie.backends.embedded import EmbeddedBackend

    class WalkOnly(EmbeddedBackend):
        capabilities = Capabilities(frozenset({"walker"}), True, frozenset({"rgb"}), "any")

    with BACKENDS.override("walk-only", WalkOnly):
        with pytest.raises(ConfigError, match="backend 'walk-only' cannot run this suite"):
            RunSpec.resolve("random", {}, family="aerial", backend="walk-only")


def test_make_jobs_records_each_suite_under_its_own_agent_folder(tmp_path):
    """Jobs of suite `s` with agent `random` go to `records/s/random`, repeat by repeat."""
    run = RunSpec.resolve("random", {}, family="rescue")
    episodes = load_suite("rescue-smoke-v2").episodes[:2]
    jobs = make_jobs({"s": episodes}, run, 2, tmp_path / "records")
    assert [j.record.parent for j in jobs] == [tmp_path / "records" / "s" / "random"] * 4
    assert [(j.repeat, j.episode) for j in jobs[:2]] == [(0, episodes[0]), (0, episodes[1])]


def test_make_jobs_refuses_a_suite_name_that_cannot_name_a_folder(tmp_path):
    """A suite called `../x` would put its records outside the run's folder: refused."""
    run = RunSpec.resolve("random", {}, family="rescue")
    with pytest.raises(ParameterError, match="suite name"):
        make_jobs(
            {"../x": load_suite("rescue-smoke-v2").episodes[:1]}, run, 1, tmp_path / "records"
        )
