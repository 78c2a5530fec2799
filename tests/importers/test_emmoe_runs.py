"""``sortie rescore emmoe`` and ``sortie export emmoe``: EMMOE's run logs in, a sortie run out.

The sample logs in docs/examples/emmoe/exp were written in HomieBot's format by hand, each run
designed to test one ending; their metrics below are counted by hand from the files.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose
from sortie.core.records import Outcome, StepRecord
from sortie.export.household.emmoe import task_numbers
from sortie.importers.emmoe import read_tasks
from sortie.importers.emmoe_runs import rescore_runs
from sortie.importers.emmoe_suite import canonical_task, named_things
from sortie.importers.problems import Problems
from sortie.metrics.household import METRICS
from sortie.missions.household.emmoe import code_of, history_entry, parse_history
from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.records import ErrorCode, RoundStatus
from sortie.missions.loading import load_suite
from sortie.report.tables import metric_rows
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from tests.conftest import run_stored
from tests.household_records import END, done, failed, store_records, task, trajectory
from tests.importers.emmoe_notebooks import load_name_mapping, notebook_metrics, notebook_srr
from tests.importers.emmoe_notebooks import runs as notebook_runs

# Under pytest -n one process runs this module: its fixture (the runs exported) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

SAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "emmoe"
LOGS, TASKS = SAMPLE / "exp", [SAMPLE / "EMMOE-100" / "data"]
BROKEN = Path(__file__).parent / "fixtures" / "emmoe_broken_exp" / "exp"
runner = CliRunner()
ROUND_TRIP = [m for m in METRICS if m not in ("gc", "no_goals")]
"""Every household metric but GC: EMMOE's logs hold no final state."""


@pytest.fixture(scope="module")
def sample():
    """The sample's runs scored, by key ``model/task/run``."""
    scored, refused = rescore_runs(LOGS, TASKS)
    assert refused == []
    return {r.key: r for r in scored}


@pytest.mark.parametrize(
    ("key", "reason", "expected"),
    [
        # go, a pick that failed (E1), pick, go, put, end: both steps, 6 rounds against 5
        ("HomieBot-7B/2/1", None, {"sr": 1, "tp": 1, "tp_emmoe": 1, "plwsr": 5 / 6}),
        # go, a put with an empty hand (L2), end: nothing done, ended
        ("HomieBot-7B/2/2", "ended_unfinished", {"sr": 0, "tp": 0, "tp_emmoe": 0, "ended": 1}),
        # go, open fridge, then a pick whose outcome the log lacks, then no answer: 1 of 4
        ("HomieBot-7B/7/1", "no_answer", {"tp": 1 / 4, "tp_emmoe": 1 / 5, "ended": 0}),
        # the orange keypath, one put too far (D1) re-planned: 7 rounds against 6
        ("HomieBot-7B/20/1", None, {"sr": 1, "tp": 1, "plwsr": 6 / 7, "replans": 1}),
        # pick mug, an open of a table (L4), 16 failed go-tos (E1), a 20th unlogged: 1 of 2
        ("HomieBot-7B/91/1", "rounds_exhausted", {"tp": 1 / 2, "tp_emmoe": 1 / 3, "rounds": 20}),
    ],
)
def test_the_sample_runs_score_as_counted_by_hand(sample, key, reason, expected):
    """Each sample run's ending and metrics, counted from its conversation.json."""
    run = sample[key]
    assert run.trajectory.footer.failure_reason == reason
    assert {k: run.metrics[k] for k in expected} == pytest.approx(expected)
    assert math.isnan(run.metrics["gc"])


def test_error_codes_come_from_emmoes_feedback_strings(sample):
    """E1, L2, D1, L4 and E1 × 16 are read off the feedback; 17 failures re-planned in 91."""
    codes = {
        k: {c: v for c in ("e1", "l2", "d1", "l4") if (v := r.metrics[c])}
        for k, r in sample.items()
    }
    assert codes["HomieBot-7B/2/1"] == {"e1": 1}
    assert codes["HomieBot-7B/2/2"] == {"l2": 1}
    assert codes["HomieBot-7B/20/1"] == {"d1": 1}
    assert codes["HomieBot-7B/91/1"] == {"e1": 16, "l4": 1}
    last = sample["HomieBot-7B/91/1"].trajectory.steps[-1].part
    assert last.status is RoundStatus.UNRECORDED
    assert (
        sample["HomieBot-7B/91/1"].metrics["failed_subtasks"],
        sample["HomieBot-7B/91/1"].metrics["replans"],
    ) == (17, 17)


def test_the_sample_table_by_hand():
    """Over 4 tasks (task 2's two runs averaged first): SR 1.5/4, TP 2.25/4, SRR 1.5/19 vs 1.5/18.5.

    tp_emmoe: task 2 (1 + 0)/2, task 7 1/5, task 20 1, task 91 1/3. Failures: task 2 1 (half
    in a success), 20 1 (in a success), 91 17; re-planned: task 2 0.5, 20 1, 91 17.
    """
    scored, _ = rescore_runs(LOGS, TASKS)
    columns = ("sr", "tp", "tp_emmoe", "srr", "srr_emmoe")
    rows = metric_rows("m", ((r.task.split.value, r.key, r.metrics) for r in scored), columns)
    overall = rows[-1]
    expected = {
        "sr": 37.5,
        "tp": 56.25,
        "tp_emmoe": (0.5 + 0.2 + 1 + 1 / 3) / 4 * 100,
        "srr": 1.5 / 19 * 100,
        "srr_emmoe": 1.5 / 18.5 * 100,
    }
    assert (overall.group, overall.n) == ("all", 4)
    assert {c: e.mean for c, e in overall.estimates.items()} == pytest.approx(expected)


def test_runs_keeps_only_the_run_numbers_asked_for():
    """--runs 2: only task 2's second run (EMMOE's notebooks read one run of three)."""
    scored, _ = rescore_runs(LOGS, TASKS, runs={2})
    assert [r.key for r in scored] == ["HomieBot-7B/2/2"]


def test_broken_logs_are_reported_all_at_once():
    """Not a list, a history that does not parse, an unknown verb, an unknown feedback, no task."""
    with pytest.raises(ConfigError) as caught:
        rescore_runs(BROKEN, TASKS)
    text = str(caught.value)
    assert "5 problem(s), nothing scored" in text
    for expected in (
        "2/1/conversation.json: conversation: expected a list",
        "7/1/conversation.json: entry 2: Historical Execution:",
        "unknown action 'Fly' in a round that succeeded",
        "'Something odd happened' carries none of EMMOE's error messages",
        "no task folder for task 42",
    ):
        assert expected in text


@pytest.mark.parametrize(
    ("feedback", "code"),
    [
        ("Unable to go to, the target is far away", ErrorCode.D1),
        ("Unable to pick, the target is too close", ErrorCode.D2),
        (
            "Fly is not in the action list! You should only choose actions in the list.",
            ErrorCode.F1,
        ),
        ("banana does not exist! Please choose another object", ErrorCode.F2),
        ("Unable to pick, the hand is full", ErrorCode.L1),
        ("Unable to put, the hand is empty", ErrorCode.L2),
        ("Unable to put, the fridge is closed, you should open it first", ErrorCode.L3),
        ("Can not open table! Please choose another object", ErrorCode.L4),
        ("Unable to pick, the subtask is too difficult to perform", ErrorCode.E1),
        ("Unable to put, and the object is missing", ErrorCode.E2),
        ("Unable to put, time out", ErrorCode.E3),
        ("None", None),
    ],
)
def test_each_of_emmoes_feedback_strings_gives_its_code(feedback, code):
    """The strings of EMMOE's executor, one per code (F2's and L4's share their ending)."""
    assert code_of(feedback) is code


def test_a_history_line_reads_as_emmoes_notebooks_split_it():
    """Entries end in (success) or (fail) and a space; brackets and case are kept as written."""
    line = "Historical Execution: (1) [Go to, kitchen](success) (2) Put, Apple, fridge(fail) "
    entries = parse_history(line)
    assert [(e.number, e.words, e.succeeded) for e in entries] == [
        (1, ("Go to", "kitchen"), True),
        (2, ("Put", "Apple", "fridge"), False),
    ]
    assert history_entry(3, ("Pick", "apple"), RoundStatus.SUCCESS) == "(3) Pick, apple(success) "


# --- the round trip ------------------------------------------------------------------------
def emmoe_notebook_tp(history: list[tuple[str, str, str, bool]], keypaths, ended: bool) -> float:
    """TP as EMMOE's count_TP notebook computes it, written again from its description.

    The history (action word, two lower-cased names or "none", success) gets an End step when
    the run ended; each keypath ends in End; a successful step equal to the keypath's next one
    moves it on; TP is the best keypath's matched share. Exported names are scene names, so
    the synonym table maps each to itself and plain equality is EMMOE's match.
    """
    steps = [*history, ("End", "none", "none", True)] if ended else history
    best = 0.0
    for keypath in keypaths:
        wanted = [[w.strip() for w in step.strip("[]").split(",")] for step in keypath]
        wanted = [(w[0], *(w[1:] + ["none", "none"])[:2]) for w in wanted]
        at = 0
        for action, target, place, ok in steps:
            if at < len(wanted) and ok and (action, target, place) == wanted[at]:
                at += 1
        best = max(best, at / len(wanted))
    return best


def notebook_history(conversation: list[str]) -> list[tuple[str, str, str, bool]]:
    """Return the last prompt's history as the notebook keeps it."""
    line = re.search(r"Historical Execution:.*", conversation[-1])
    assert line is not None
    return [
        (e.words[0], *(list(e.words[1:]) + ["none", "none"])[:2], e.succeeded)
        for e in parse_history(line.group(0))
    ]


def no_answer_record():
    """A hand-built run: open the fridge, a failed pick, then no readable answer."""
    rounds = [done("open", "fridge_1"), failed("pick", "apple_1", code=ErrorCode.D1)]
    record = trajectory(
        task(),
        rounds,
        HouseholdFacts(ended=False, rounds=2),
        outcome=Outcome.FAILURE,
        failure_reason="no_answer",
        episode_id="home/7",
    )
    unanswered = StepRecord(
        index=3,
        pose=Pose(0.0, 0.0, 0.0),
        action={"type": "invalid", "raw": "?", "error": "not parseable"},
        clock_sim=3.0,
        clock_latency=3.0,
    )
    record.steps.append(unanswered)
    return record


def unended_record():
    """A hand-built run: the whole keypath, then no readable answer (its put is the last round)."""
    rounds = [done("open", "fridge_1"), done("pick", "apple_1"), done("put", "apple_1", "fridge_1")]
    facts = HouseholdFacts(ended=False, rounds=3)
    return trajectory(
        task(), rounds, facts, Outcome.FAILURE, episode_id="home/9", failure_reason="no_answer"
    )


def out(folder: Path, run: str) -> Path:
    """Return where run ``run`` is exported."""
    return folder / f"emmoe-{run}"


def rescore_export(path: Path):
    """Return an exported folder's runs rescored: its exp folder over its task folders."""
    return rescore_runs(path / "exp", [path / "EMMOE-100" / "data"])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """An oracle, a random and a hand-built run exported to EMMOE's layout; their stored metrics.

    The hand-built run has two ``no_answer`` episodes: one whose last round failed, one whose
    last round did the keypath's last step (which EMMOE's notebooks never see).
    """
    folder = tmp_path_factory.mktemp("emmoe-trip")
    store = folder / "s.db"
    for agent, limit in (("oracle", 4), ("random", 8)):  # random acts on things no task names
        request = RunRequest(
            ("household-smoke-v1",), agent, store=store, run_id=agent, repeats=2, limit=limit
        )
        run_stored(request)
    with Store(store) as opened:
        store_records(
            opened,
            "hand",
            [
                no_answer_record(),
                trajectory(task(), [done("open", "fridge_1"), END], episode_id="home/8"),
                unended_record(),
            ],
        )
        stored = {
            run: {e.key: e for e in opened.episodes(run)} for run in ("oracle", "random", "hand")
        }
    for run in stored:
        result = runner.invoke(
            app,
            [
                "export",
                "emmoe",
                "--run",
                run,
                "--store",
                str(store),
                "--out",
                str(folder / f"emmoe-{run}"),
            ],
        )
        assert result.exit_code == 0, result.output
    return folder, stored


@pytest.mark.parametrize("run", ["oracle", "random", "hand"])
def test_a_run_exported_and_rescored_gets_its_own_metrics_back(exported, run):
    """Every household metric but GC is the same, episode by episode and repeat by repeat."""
    folder, stored = exported
    ids = json.loads((folder / f"emmoe-{run}" / "sortie_ids.json").read_text())
    scored, refused = rescore_runs(
        folder / f"emmoe-{run}" / "exp", [folder / f"emmoe-{run}" / "EMMOE-100" / "data"]
    )
    assert refused == [] and len(scored) == len(stored[run])
    for again in scored:
        key = next(
            k
            for k, e in stored[run].items()
            if e.episode_id == ids[again.task.id] and e.repeat == again.run - 1
        )
        original = stored[run][key].metrics
        assert {m: again.metrics[m] for m in ROUND_TRIP} == pytest.approx(
            {m: original[m] for m in ROUND_TRIP}
        ), key


@pytest.mark.parametrize("run", ["oracle", "random", "hand"])
def test_emmoes_own_tp_reading_agrees_with_tp_emmoe(exported, run):
    """Re-reading the exported logs as EMMOE's notebook does gives sortie's tp_emmoe."""
    folder, _ = exported
    scored, _ = rescore_runs(
        folder / f"emmoe-{run}" / "exp", [folder / f"emmoe-{run}" / "EMMOE-100" / "data"]
    )
    for again in scored:
        found = next(
            (folder / f"emmoe-{run}" / "exp").glob(
                f"*/{again.task.id}/{again.run}/conversation.json"
            )
        )
        conversation = json.loads(found.read_text())
        keypaths = json.loads((again.task.folder / "keypath.json").read_text())
        ended = bool(conversation) and "Subtask: [End]" in conversation[-1]
        history = notebook_history(conversation) if conversation else []
        assert emmoe_notebook_tp(history, keypaths, ended) == pytest.approx(
            again.metrics["tp_emmoe"]
        )


def notebook_expected(episodes) -> dict[str, float]:
    """Return a run's own TP (emmoe reading), SR, PLWSR and SER, as the notebooks pool them."""
    metrics = [e.metrics for e in episodes]
    mean = {m: sum(x[m] for x in metrics) / len(metrics) for m in ("tp_emmoe", "sr", "plwsr")}
    ended = sum(x["ended"] for x in metrics)
    ser = sum(x["sr"] for x in metrics) / ended
    return {"tp": mean["tp_emmoe"], "sr": mean["sr"], "plwsr": mean["plwsr"], "ser": ser}


@pytest.mark.parametrize("run", ["oracle", "random", "hand"])
def test_emmoes_notebooks_read_the_export_and_give_the_runs_own_metrics(exported, run):
    """EMMOE's notebooks, restated, give the run's TP (emmoe reading), SR, PLWSR and SER."""
    folder, stored = exported
    root = out(folder, run)
    (model,) = [p.name for p in (root / "exp").iterdir()]
    assert notebook_metrics(root, model) == pytest.approx(notebook_expected(stored[run].values()))


@pytest.mark.parametrize("run", ["oracle", "random", "hand"])
def test_emmoes_srr_notebook_gives_the_runs_own_srr_parts(exported, run):
    """Per run number, the SRR notebook's two counts are the repeat's replans (emmoe reading)."""
    folder, stored = exported
    root = out(folder, run)
    (model,) = [p.name for p in (root / "exp").iterdir()]
    for repeat in {e.repeat for e in stored[run].values()}:
        episodes = [e.metrics for e in stored[run].values() if e.repeat == repeat]
        own = (sum(m["replans_in_success"] for m in episodes), sum(m["replans"] for m in episodes))
        assert notebook_srr(root, model, repeat + 1) == own


@pytest.mark.parametrize("run", ["oracle", "random", "hand"])
def test_the_exported_table_holds_every_name_a_successful_round_acted_on(exported, run):
    """The notebooks look up each successful round's names: the exported table has them all."""
    folder, _ = exported
    mapping = load_name_mapping(out(folder, run))
    (model,) = [p.name for p in (out(folder, run) / "exp").iterdir()]
    acted = {
        name
        for one in notebook_runs(out(folder, run), model)
        for step in one.history
        if step[3] == "success"
        for name in step[1:3]
        if name != "None"
    }
    assert acted and acted <= set(mapping)


@pytest.mark.parametrize("run", ["oracle", "random", "hand"])
def test_import_reads_every_task_export_wrote(exported, run):
    """Every exported task reads back, each of its scene names a sortie kind (``mug_0``: mug)."""
    folder, stored = exported
    problems = Problems("emmoe")
    _, table, tasks = read_tasks([out(folder, run)], problems)
    assert problems.found == []
    assert len(tasks) == len({e.episode_id for e in stored[run].values()})
    for one in tasks:
        assert named_things(canonical_task(one, table))


def test_sortie_import_emmoe_places_the_exported_oracle_tasks(exported, tmp_path):
    """`sortie import emmoe` on an export writes its tasks as a suite, none refused by name."""
    folder, _ = exported
    suite = tmp_path / "back.jsonl"
    result = runner.invoke(
        app, ["import", "emmoe", str(out(folder, "oracle")), "--out", str(suite)]
    )
    assert result.exit_code == 0, result.output
    assert "no sortie kind" not in result.output and "Wrote " in result.output
    assert len(load_suite(str(suite)).episodes) >= 1


def test_the_export_refuses_a_folder_in_the_way(exported):
    """An existing, non-empty --out is refused; nothing is written."""
    folder, _ = exported
    result = runner.invoke(
        app,
        [
            "export",
            "emmoe",
            "--run",
            "oracle",
            "--store",
            str(folder / "s.db"),
            "--out",
            str(folder / "oracle"),
        ],
    )
    assert result.exit_code != 0 and "not an empty folder" in result.output


def test_task_numbers_keep_the_episode_number_and_never_repeat():
    """household-v1/0049 is task 49; a second 49 and an id without a number get the next free."""
    numbers = task_numbers(["household-v1/0049", "other/0049", "home/x", "household-v1/0003"])
    assert numbers == {
        "household-v1/0049": 49,
        "other/0049": 50,
        "home/x": 51,
        "household-v1/0003": 3,
    }


def test_the_cli_prints_both_readings_and_the_codes():
    """The table holds TP and tp_emmoe, SRR and srr_emmoe; the code table follows."""
    result = runner.invoke(app, ["rescore", "emmoe", str(LOGS)])
    assert result.exit_code == 0, result.output
    assert "TP_EMMOE" in result.output and "SRR_EMMOE" in result.output
    assert "Executor error codes" in result.output
    json_result = runner.invoke(app, ["rescore", "emmoe", str(LOGS), "--format", "json"])
    assert json_result.exit_code == 0 and "tp_emmoe" in json_result.output


def test_odd_digits_and_deep_json_are_problems_not_tracebacks(tmp_path):
    """A task folder named "²" (a digit to isdigit, not to int) and 100,000-deep JSON are noted."""
    logs = tmp_path / "exp" / "HomieBot-7B"
    (logs / "²" / "1").mkdir(parents=True)
    (logs / "²" / "1" / "conversation.json").write_text("[]")
    (logs / "2" / "9").mkdir(parents=True)  # task 2 is in the sample's task folders
    (logs / "2" / "9" / "conversation.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError) as caught:
        rescore_runs(tmp_path / "exp", TASKS)
    text = str(caught.value)
    assert "expected <model>/<task number>/<run number>/" in text
    assert "nested too deep to read" in text


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_markup_and_escape_bytes_in_a_model_folder_print_as_text(tmp_path, fmt):
    r"""A model folder named ``[red]x`` + ESC ``[2J``: shown as written, ESC as ``\x1b``."""
    import shutil

    shutil.copytree(LOGS, tmp_path / "exp")
    (tmp_path / "exp" / "HomieBot-7B").rename(tmp_path / "exp" / "[red]x\x1b[2J")
    tasks = [arg for path in TASKS for arg in ("--tasks", str(path))]
    arguments = ["rescore", "emmoe", str(tmp_path / "exp"), *tasks, "--format", fmt]
    result = runner.invoke(app, arguments, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert result.output.count("[red]x\\x1b[2J") >= 3  # every group of the run, then its codes


def test_a_full_disk_during_export_is_the_message_and_leaves_no_partial_folder(
    exported, monkeypatch
):
    """ENOSPC while exporting to EMMOE's layout: the documented message; no `*.partial/`."""
    import errno

    folder, _ = exported

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    out = folder / "emmoe-full"
    arguments = ["export", "emmoe", "--run", "hand", "--store", str(folder / "s.db")]
    result = runner.invoke(app, [*arguments, "--out", str(out)], env={"COLUMNS": "300"})
    assert result.exit_code != 0 and "the disk is full" in result.output
    assert "free disk space" in result.output and "Traceback" not in result.output
    assert not list(folder.glob("*.partial")) and not out.exists()
