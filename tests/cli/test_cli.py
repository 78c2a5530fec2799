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
        with Image.open(tmp_path / f"{name}.png") as picture:
            assert picture.size == (64, 64)
    assert (tmp_path / "topdown.png").exists()


def test_view_refuses_a_pose_inside_a_wall(tmp_path):
    """A pose inside the room's wall is a clear error with exit code 2, and nothing is drawn."""
    result = runner.invoke(
        app, ["view", "flexible_room", "--pose", "7,0,0,0", "--out", str(tmp_path)]
    )
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
    result = runner.invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            "oracle",
            "--out",
            str(tmp_path / "runs"),
            "--store",
            str(tmp_path / "sortie.db"),
        ],
    )
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "L1" in line)
    assert row.split("│")[7].strip() == "100"  # level, episodes, runs, 3 outcomes, TCR
    assert len(list((tmp_path / "runs" / "hand" / "oracle").glob("*.jsonl"))) == 1


def test_run_with_an_unknown_agent_suggests_one(tmp_path):
    """A misspelt agent name gets a suggestion."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "hand.jsonl"
    write_suite(suite, SuiteHeader(suite="hand"), [room_rescue("h/0")])
    result = runner.invoke(
        app, ["run", str(suite), "--agent", "oracel", "--store", str(tmp_path / "sortie.db")]
    )
    assert result.exit_code == 2 and "Did you mean 'oracle'?" in result.output


def test_run_resumes_a_run_id_and_prints_the_whole_table(tmp_path):
    """A second `sortie run` with the same --run-id runs nothing and prints the stored table."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "hand.jsonl"
    write_suite(suite, SuiteHeader(suite="hand"), [room_rescue("h/0")])
    command = [
        "run",
        str(suite),
        "--agent",
        "random",
        "--run-id",
        "r",
        "--store",
        str(tmp_path / "s.db"),
    ]
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
    result = runner.invoke(
        app,
        [
            "run",
            "rescue-smoke-v2",
            "--agent",
            "random",
            "--workers",
            "0",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2 and "--workers must be at least 1, got 0" in result.output


def _hand_suite(tmp_path, count: int = 1, name: str = "hand"):
    """Write a suite file of ``count`` room rescues called ``name``; return its path."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / f"{name}.jsonl"
    write_suite(suite, SuiteHeader(suite=name), [room_rescue(f"h/{i}") for i in range(count)])
    return suite


def test_an_error_quoting_markup_prints_it_as_written(tmp_path):
    """A builder name like `[/x]` in an error message is printed verbatim, not parsed."""
    result = runner.invoke(app, ["view", "[/x]", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "Unknown world builder '[/x]'" in result.output


def test_a_run_id_with_markup_is_refused_as_written(tmp_path):
    """`--run-id [red]x[/red]` is refused (it cannot name a file) and shown with its brackets."""
    result = runner.invoke(
        app,
        [
            "run",
            str(_hand_suite(tmp_path)),
            "--agent",
            "random",
            "--run-id",
            "[red]x[/red]",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2
    assert "--run-id '[red]x[/red]': use only letters, digits" in result.output


def test_a_run_id_with_a_path_writes_nothing_outside_the_store_folder(tmp_path):
    """`--run-id ../out` is refused before any record or run is written."""
    suite = _hand_suite(tmp_path)
    result = runner.invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            "random",
            "--run-id",
            "../out",
            "--store",
            str(tmp_path / "store" / "s.db"),
        ],
    )
    assert result.exit_code == 2 and "--run-id '../out'" in result.output
    assert not (tmp_path / "out").exists() and list(tmp_path.rglob("*.jsonl")) == [suite]


def test_a_suite_name_with_a_path_is_refused(tmp_path):
    """A suite whose header names it `../escape` gets a clear error, and no record is written."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "bad.jsonl"
    write_suite(suite, SuiteHeader(suite="escape"), [room_rescue("h/0")])
    suite.write_text(suite.read_text().replace('"suite":"escape"', '"suite":"../escape"'))
    result = runner.invoke(
        app, ["run", str(suite), "--agent", "random", "--store", str(tmp_path / "store" / "s.db")]
    )
    assert result.exit_code == 2 and "'../escape'" in result.output
    assert list(tmp_path.rglob("*.jsonl")) == [suite]


def test_paths_with_markup_print_as_written_after_a_run(tmp_path):
    """A store and records folder named with `[red]`/`[/x]` are printed verbatim."""
    store = tmp_path / "[red]s[/red].db"
    result = runner.invoke(
        app,
        [
            "run",
            str(_hand_suite(tmp_path)),
            "--agent",
            "random",
            "--store",
            str(store),
            "--out",
            str(tmp_path / "[/x]"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "[red]s[/red].db" in result.output and "[/x]" in result.output


def test_limit_runs_the_first_episodes_and_is_part_of_the_run(tmp_path):
    """--limit 2 stores two of three episodes; resuming without it is refused as another config."""
    command = [
        "run",
        str(_hand_suite(tmp_path, 3)),
        "--agent",
        "random",
        "--run-id",
        "r",
        "--store",
        str(tmp_path / "s.db"),
    ]
    assert runner.invoke(app, [*command, "--limit", "2"]).exit_code == 0
    from sortie.run.store import Store

    with Store(tmp_path / "s.db") as store:
        assert [e.episode_id for e in store.episodes("r")] == ["h/0", "h/1"]
    result = runner.invoke(app, command)
    assert result.exit_code == 2 and "limit: stored 2, given None" in result.output


def test_episodes_runs_only_the_named_ones(tmp_path):
    """--episodes h/2,h/0 stores exactly those two episodes."""
    command = [
        "run",
        str(_hand_suite(tmp_path, 3)),
        "--agent",
        "random",
        "--run-id",
        "r",
        "--store",
        str(tmp_path / "s.db"),
        "--episodes",
        "h/2,h/0",
    ]
    assert runner.invoke(app, command).exit_code == 0
    from sortie.run.store import Store

    with Store(tmp_path / "s.db") as store:
        assert sorted(e.episode_id for e in store.episodes("r")) == ["h/0", "h/2"]


def test_an_unknown_episode_id_suggests_one(tmp_path):
    """A misspelt --episodes id is refused with the nearest id."""
    result = runner.invoke(
        app,
        [
            "run",
            str(_hand_suite(tmp_path, 3)),
            "--agent",
            "random",
            "--episodes",
            "h/1x",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2
    assert "no episode 'h/1x' in hand. Did you mean 'h/1'?" in result.output


def test_an_agent_argument_the_agent_does_not_take_is_refused(tmp_path):
    """`-a max_mov=3` for random says so, suggests max_move and lists its arguments."""
    result = runner.invoke(
        app,
        [
            "run",
            str(_hand_suite(tmp_path)),
            "--agent",
            "random",
            "-a",
            "max_mov=3",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2
    assert "agent 'random' takes no argument 'max_mov'. Did you mean 'max_move'?" in (result.output)
    assert "max_turn, max_speed, interact_every, max_move" in result.output
    from sortie.run.store import Store

    with Store(tmp_path / "s.db") as store:
        assert store.runs() == []


def test_an_agent_of_another_family_is_refused(tmp_path):
    """The explorer (rescue) on an aerial suite is refused, naming both families."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import aerial_hop

    suite = tmp_path / "hops.jsonl"
    write_suite(suite, SuiteHeader(suite="hops"), [aerial_hop(episode_id="hops/0")])
    result = runner.invoke(
        app, ["run", str(suite), "--agent", "explorer", "--store", str(tmp_path / "s.db")]
    )
    assert result.exit_code == 2
    assert "agent 'explorer' plays rescue missions; suite hops is aerial" in result.output


class _FailingAgent:
    """An agent whose every act raises: every episode it plays is an agent_error."""

    name = "failing"
    sensors: frozenset = frozenset()

    def reset(self, brief, seed) -> None:
        """Accept the episode."""

    def act(self, observation):
        """Fail."""
        raise RuntimeError("the model is down\nsecond line")


def test_a_run_whose_episodes_all_error_exits_1_and_counts_them(tmp_path, override):
    """With the abort off, three errored episodes are stored, counted, and the exit code is 1."""
    from sortie.agents.base import AGENTS

    override(AGENTS, "failing", _FailingAgent)
    result = runner.invoke(
        app,
        [
            "run",
            str(_hand_suite(tmp_path, 3)),
            "--agent",
            "failing",
            "--max-consecutive-errors",
            "0",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "3 of 3 episodes ended in an error (agent_error 3)" in result.output
    assert "every one: RuntimeError: the model is down" in result.output


def test_a_run_stops_after_too_many_errors_in_a_row(tmp_path, override):
    """--max-consecutive-errors 2 stops after two errored episodes, keeping them, with code 1."""
    from sortie.agents.base import AGENTS
    from sortie.run.store import Store

    override(AGENTS, "failing", _FailingAgent)
    result = runner.invoke(
        app,
        [
            "run",
            str(_hand_suite(tmp_path, 3)),
            "--agent",
            "failing",
            "--run-id",
            "f",
            "--max-consecutive-errors",
            "2",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "2 episodes in a row ended in an error" in text and "--run-id f" in text
    assert "RuntimeError: the model is down" in text and "second line" not in text
    with Store(tmp_path / "s.db") as store:
        assert len(store.episodes("f")) == 2


def test_demo_records_frames_for_its_report_except_for_random_walks(tmp_path):
    """On a one-room suite the oracle's steps keep frames, shown by its player; random's none."""
    import dataclasses
    import json
    from contextlib import ExitStack

    from sortie.core.records_io import SuiteHeader, read_trajectory, write_suite
    from sortie.missions.family import Demo
    from sortie.missions.registry import FAMILIES
    from sortie.run.store import Store
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "room.jsonl"
    write_suite(suite, SuiteHeader(suite="room"), [room_rescue("room/0", 2.0, (-1.0, -0.5))])
    shown = {"rescue": Demo(str(suite), ("oracle", "random"))}
    with ExitStack() as stack:
        for name in FAMILIES.names():  # the demo runs the room with two agents, nothing else
            family = dataclasses.replace(FAMILIES.get(name), demo=shown.get(name))
            stack.enter_context(FAMILIES.override(name, family))
        result = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "demo" / "runs" / "sortie.db") as store:
        kept = {
            run: [
                bool(s.frames) for e in store.episodes(run) for s in read_trajectory(e.record).steps
            ]
            for run in ("demo-rescue-oracle", "demo-rescue-random")
        }
    assert all(kept["demo-rescue-oracle"]) and not any(kept["demo-rescue-random"])
    data = next((tmp_path / "demo" / "report" / "rescue" / "episodes" / "data").glob("*oracle*"))
    steps = json.loads(data.read_text().split("=", 1)[1].rstrip().rstrip(";"))["steps"]
    assert steps and all(step["frame"] for step in steps)


def test_family_settings_are_checked_and_the_old_flags_are_their_aliases(tmp_path):
    """-F triggr= is refused with a near name; --triggers is -F triggers=; both differing fail."""
    command = ["run", str(_hand_suite(tmp_path, 1)), "--agent", "random"]
    command += ["--store", str(tmp_path / "s.db"), "--run-id", "r"]
    result = runner.invoke(app, [*command, "-F", "triggr=native"])
    assert result.exit_code == 2 and "Did you mean 'triggers'?" in result.output
    result = runner.invoke(app, [*command, "-F", "triggers=native", "--triggers", "assisted"])
    assert result.exit_code == 2 and "differ" in result.output
    assert runner.invoke(app, [*command, "--triggers", "native"]).exit_code == 0
    from sortie.run.store import Store

    with Store(tmp_path / "s.db") as store:
        assert store.run_config("r").settings == {"triggers": "native"}
    again = runner.invoke(app, [*command, "-F", "triggers=native"])  # the same run, resumed
    assert again.exit_code == 0, again.output


def test_families_lists_each_family_with_its_settings():
    result = runner.invoke(app, ["families"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for words in ("rescue", "multirotor", "judge=exact", "setting=privileged", "skills=default"):
        assert words in result.output


def test_view_report_and_run_refuse_a_folder_of_other_files(tmp_path):
    """The one rule of output folders, as the commands meet it (nothing of the user's moves)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    suite, store = str(_hand_suite(tmp_path, 1)), str(tmp_path / "s.db")
    ran = runner.invoke(app, ["run", suite, "--agent", "random", "--store", store, "--run-id", "r"])
    assert ran.exit_code == 0, ran.output
    commands = [
        ["view", "flexible_room", "--out", str(mine), "--size", "32"],
        ["run", suite, "--agent", "random", "--store", store, "--out", str(mine)],
        ["report", "--run", "r", "--store", store, "--html", str(mine)],
    ]
    for words in commands:
        result = runner.invoke(app, words)
        assert result.exit_code == 2 and "holds files sortie did not write" in result.output
    assert (mine / "notes.txt").read_text() == "keep me" and len(list(mine.iterdir())) == 1
    from sortie.run.store import Store

    with Store(tmp_path / "s.db") as opened:
        assert opened.runs() == ["r"]  # the refused run left no row


class _UnreadableAgent:
    """An agent whose every answer could not be read: every step is an invalid action."""

    name = "unreadable"
    sensors: frozenset = frozenset()

    def reset(self, brief, seed) -> None:
        """Accept the episode."""

    def act(self, observation):
        """Answer something no mission reads."""
        from sortie.core.actions import InvalidAction

        return InvalidAction(raw='{"turn": 10, "extra": 1}', error="unknown key 'extra'")


def test_a_run_of_invalid_actions_says_so_with_the_first_reason(tmp_path, override):
    """An episode that only times out on invalid actions is counted, with the refused answer."""
    from sortie.agents.base import AGENTS

    override(AGENTS, "unreadable", _UnreadableAgent)
    result = runner.invoke(
        app,
        ["run", str(_hand_suite(tmp_path, 1)), "--agent", "unreadable"]
        + ["--store", str(tmp_path / "s.db")],
    )
    assert result.exit_code == 0, result.output
    assert "invalid action(s) in 1 of 1 episodes" in result.output
    assert "unknown key 'extra'" in result.output


def test_a_report_says_a_runs_invalid_actions_with_the_first_reason(tmp_path, override):
    """`sortie report` of a run that only timed out on invalid actions says why, once."""
    from sortie.agents.base import AGENTS

    override(AGENTS, "unreadable", _UnreadableAgent)
    store = str(tmp_path / "s.db")
    runner.invoke(
        app,
        ["run", str(_hand_suite(tmp_path, 1)), "--agent", "unreadable", "--store", store]
        + ["--run-id", "u"],
    )
    shown = runner.invoke(app, ["report", "--run", "u", "--store", store]).output
    assert "u: " in shown and "invalid action(s) in 1 of 1 episodes" in shown
    assert "unknown key 'extra'" in shown
