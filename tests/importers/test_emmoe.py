"""`sortie import emmoe`: EMMOE-100's task folders as a household suite on seeded apartments."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.errors import ConfigError
from sortie.core.records_io import read_trajectory
from sortie.generation.household import HouseholdValidator
from sortie.importers import import_suite
from sortie.importers.emmoe import (
    EmmoeStep,
    EmmoeTask,
    parse_step,
    read_name_dict,
    read_task_folder,
)
from sortie.importers.emmoe_suite import Refused, named_things, place_task, sortie_kind
from sortie.importers.problems import Problems
from sortie.missions.household.records import (
    HouseholdTask,
    ObjectRole,
    Relation,
    Split,
    TaskAttribute,
    Verb,
)
from sortie.missions.loading import load_suite

# Under pytest -n one process runs this module: its fixture (the sample imported) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "emmoe"
SAMPLE = EXAMPLES / "EMMOE-100"
BROKEN = Path(__file__).parent / "fixtures" / "emmoe_broken"
runner = CliRunner()


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[Path, dict]:
    """The sample imported once: the suite file and its header settings."""
    out = tmp_path_factory.mktemp("emmoe") / "emmoe-sample.jsonl"
    header, count = import_suite("emmoe", [SAMPLE], out, None)
    assert count == 5
    return out, header.settings


def _tasks(out: Path) -> dict[str, HouseholdTask]:
    suite = load_suite(str(out))
    return {
        e.episode_id.rsplit("/", 1)[1]: HouseholdTask.model_validate(e.mission)
        for e in suite.episodes
    }


def test_the_sample_keeps_emmoes_ids_and_splits(imported):
    """Tasks 2, 5, 7, 20 (train) and 91 (test) keep their numbers; 93 (upstairs) is skipped."""
    out, settings = imported
    suite = load_suite(str(out))
    ids = [e.episode_id for e in suite.episodes]
    assert ids == [f"emmoe-sample/{n:04d}" for n in (2, 5, 7, 20, 91)]
    splits = {k: t.split for k, t in _tasks(out).items()}
    assert splits == {"0002": Split.TRAIN, "0005": Split.TRAIN, "0007": Split.TRAIN} | {
        "0020": Split.TRAIN,
        "0091": Split.TEST,
    }
    assert suite.header.generator == "sortie.importers.emmoe"
    (skipped,) = settings["skipped"]
    assert (skipped["task"], skipped["split"]) == ("93", "test")
    assert "stairs" in skipped["reason"] and "one floor" in skipped["reason"]


def test_keypaths_and_expert_have_the_files_lengths(imported):
    """Keypath steps ([End] dropped) and Subtask lines ([End] kept), counted by hand."""
    tasks = _tasks(imported[0])
    lengths = {k: ([len(p) for p in t.keypaths], len(t.expert)) for k, t in tasks.items()}
    assert lengths == {
        "0002": ([2], 5),
        "0005": ([8], 16),
        "0007": ([4], 8),
        "0020": ([3, 3], 6),
        "0091": ([2], 5),
    }
    fridge = tasks["0007"]
    assert [s.action for s in fridge.keypaths[0]] == [Verb.OPEN, Verb.PICK, Verb.PUT, Verb.CLOSE]
    assert fridge.expert[-1].action is Verb.END and all(s.skill for s in fridge.expert[:-1])
    assert tasks["0020"].keypaths[1][1].action is Verb.GO_TO  # EMMOE's Go to steps are kept


def test_steps_name_scene_things_of_the_right_kind(imported):
    """Task 7's open, pick and put name one fridge (a container) and one apple (an item)."""
    task = _tasks(imported[0])["0007"]
    opened, picked, put, closed = task.keypaths[0]
    assert opened.target == put.place == closed.target and picked.target == put.target
    assert task.objects[opened.target].kind == "fridge"
    assert task.objects[opened.target].role is ObjectRole.CONTAINER
    assert (task.objects[picked.target].kind, task.objects[picked.target].role) == (
        "apple",
        ObjectRole.ITEM,
    )
    assert opened.target.startswith("fridge_") and picked.target.startswith("apple_")


def test_objects_exist_in_the_built_apartment_with_their_roles(imported):
    """Every task object is a thing of that kind and role in the episode's apartment."""
    validator = HouseholdValidator.create()
    for episode in load_suite(str(imported[0])).episodes:
        house = validator.house(episode)
        task = HouseholdTask.model_validate(episode.mission)
        for name, wanted in task.objects.items():
            thing = house.things[name]
            assert (thing.kind, thing.role) == (wanted.kind, wanted.role), (
                episode.episode_id,
                name,
            )


def test_the_synonym_table_gives_the_objects_names(imported):
    """The apple is also 'red_apple', the fridge 'refrigerator', the counter 'kitchen area'."""
    task = _tasks(imported[0])["0007"]
    by_kind = {o.kind: o.names for o in task.objects.values()}
    assert {"apple", "red_apple"} <= set(by_kind["apple"])
    assert {"fridge", "refrigerator"} <= set(by_kind["fridge"])
    assert "kitchen area" in by_kind["counter"]


def test_goals_are_what_every_keypath_leaves(imported):
    """Task 7 ends with the apple in the closed fridge; task 20's two fruits share no goal."""
    tasks = _tasks(imported[0])
    goals = {(g.relation, tasks["0007"].objects[g.object].kind) for g in tasks["0007"].goals}
    assert goals == {(Relation.INSIDE, "apple"), (Relation.CLOSED, "fridge")}
    assert tasks["0020"].goals == []


def test_attributes_are_derived_from_keypaths_and_expert_length(imported):
    """Task 5's expert has 15 subtasks (long); task 20 has two keypaths (open-ended)."""
    tasks = _tasks(imported[0])
    assert tasks["0005"].attributes == [TaskAttribute.LONG]
    assert tasks["0020"].attributes == [TaskAttribute.SHORT, TaskAttribute.OPEN_ENDED]
    assert tasks["0007"].attributes == [TaskAttribute.SHORT]


def test_emmoe_100_attributes_come_from_the_published_lists(tmp_path):
    """With --attributes emmoe-100, task 20 is long, open-ended, logical and human-style."""
    folder = tmp_path / "data" / "train"
    shutil.copytree(SAMPLE / "data" / "train" / "20", folder / "20")
    shutil.copy(EXAMPLES / "name_dict.txt", tmp_path)
    header, count = import_suite(
        "emmoe", [tmp_path], tmp_path / "a.jsonl", None, {"attributes": "emmoe-100"}
    )
    task = HouseholdTask.model_validate(load_suite(str(tmp_path / "a.jsonl")).episodes[0].mission)
    assert count == 1 and header.settings["attributes"] == "emmoe-100"
    assert task.attributes == [
        TaskAttribute.LONG,
        TaskAttribute.OPEN_ENDED,
        TaskAttribute.LOGICAL,
        TaskAttribute.HUMAN_STYLE,
    ]


def test_the_oracle_carries_out_every_imported_task(imported, tmp_path):
    """`sortie run` with the oracle and perfect skills succeeds on all five tasks."""
    out = tmp_path / "records"
    result = runner.invoke(
        app,
        ["run", str(imported[0]), "--agent", "oracle", "-F", "skills=perfect"]
        + ["--store", str(tmp_path / "s.db"), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    outcomes = [read_trajectory(p).footer.outcome for p in sorted(out.rglob("*.jsonl"))]
    assert len(outcomes) == 5 and {str(o) for o in outcomes} == {"success"}


def test_the_command_names_the_skipped_task(tmp_path):
    """`sortie import emmoe` prints the skipped task with its reason, and the count."""
    shutil.copytree(SAMPLE / "data" / "test", tmp_path / "test")
    out = tmp_path / "t.jsonl"
    result = runner.invoke(
        app,
        ["import", "emmoe", str(tmp_path / "test"), str(EXAMPLES / "name_dict.txt")]
        + ["--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "Skipped task 93 (test): stairs" in result.output
    assert "Skipped 1 task(s)" in result.output and "Wrote 1 episodes" in result.output


def test_a_task_going_upstairs_is_refused_with_its_reason():
    """Task 93 names the stairs: no apartment has them, and the reason says so."""
    problems = Problems("emmoe")
    table = read_name_dict(EXAMPLES / "name_dict.txt", problems)
    task = read_task_folder(SAMPLE / "data" / "test" / "93", problems)
    assert task is not None and not problems.found
    with pytest.raises(Refused, match="stairs: sortie's apartments have one floor"):
        place_task(task, table, ("s", "derived"), HouseholdValidator.create())


def test_habitat_names_become_sortie_kinds():
    """YCB numbers and ReplicaCAD prefixes go; the rest maps through synonyms and aliases."""
    assert sortie_kind("013_apple") == "apple"
    assert sortie_kind("frl_apartment_bowl_01") == "bowl"
    assert sortie_kind("frl_apartment_refrigerator") == "fridge"
    assert sortie_kind("kitchen_counter") == "counter"
    assert sortie_kind("frl_apartment_tvstand") == "tv_stand"
    assert sortie_kind("002_master_chef_can") == "can"
    assert sortie_kind("living_room") == "living_room"
    with pytest.raises(Refused, match="no sortie kind"):
        sortie_kind("frl_apartment_beanbag")
    with pytest.raises(Refused, match="one floor"):
        sortie_kind("second_floor")


def test_a_name_used_against_its_kind_is_refused():
    """Opening the kitchen counter (a receptacle in sortie) refuses the task, saying so."""
    step = EmmoeStep(Verb.OPEN, "kitchen_counter")
    task = EmmoeTask("8", Split.TRAIN, "Open the drawer.", ((step,),), (step,), Path("8"))
    with pytest.raises(Refused, match=r"kitchen_counter \(counter, a receptacle\) is opened"):
        named_things(task)


def test_the_broken_folder_reports_every_problem_and_writes_nothing(tmp_path):
    """Missing file, non-list keypath, unknown verb and name, bad group: one error, no file."""
    out = tmp_path / "b.jsonl"
    with pytest.raises(ConfigError) as error:
        import_suite("emmoe", [BROKEN], out, None)
    message = str(error.value)
    expected = [
        "name_dict.txt:12: frl_apartment_table_01: expected a blank line",
        "train/1: keypath.json: missing",
        "train/3/keypath.json: keypaths.1: expected a list of steps",
        "train/4/keypath.json:2: keypaths.0.0: unknown action 'Grab'",
        "train/4/keypath.json:3: keypaths.1: does not end with [End]",
        "train/6/info.txt:1: Task: the first line must be 'Task: <instruction>'",
        "train/6/info.txt: Subtask: no 'Subtask k: [...]' lines",
        "test/95/info.txt:3: Subtask 2: Put takes 2 name(s)",
        "test/95/keypath.json:2: keypaths.0.0: 'bananna' is not in the synonym table",
    ]
    for problem in expected:
        assert problem in message, problem
    assert "Did you mean 'banana'?" in message and "10 problem(s)" in message
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("[Put, Apple , Fridge]", EmmoeStep(Verb.PUT, "apple", "fridge")),
        ("[Go to, kitchen_counter]", EmmoeStep(Verb.GO_TO, "kitchen_counter")),
        ("Open, fridge", EmmoeStep(Verb.OPEN, "fridge")),
        (" [End] ", EmmoeStep(Verb.END)),
        ("[Pick, ]", EmmoeStep(Verb.PICK)),
        ("[Grab, apple]", None),
        ("[Put, apple, fridge, table]", None),
    ],
)
def test_parse_step(text, step):
    """A step is read with or without brackets, lower-cased; an unknown verb is None."""
    assert parse_step(text) == step


def test_the_name_table_maps_synonyms_and_canonical_names(tmp_path):
    """Each synonym and the canonical name itself mean the canonical; a later group wins a word."""
    path = tmp_path / "name_dict.txt"
    path.write_text(
        "013_apple:\r\napple/Red_Apple\r\n\r\nfrl_apartment_refrigerator:\r\nfridge\r\n\r\n"
        "fridge:\r\nfridge/refrigerator\r\n\r\n006_mustard_bottle:\r\n\r\n"
    )
    problems = Problems("emmoe")
    table = read_name_dict(path, problems)
    assert not problems.found
    assert table["red_apple"] == table["013_apple"] == "013_apple"
    assert table["fridge"] == table["refrigerator"] == "fridge"
    assert table["006_mustard_bottle"] == "006_mustard_bottle"


def test_a_malformed_name_group_is_reported_once(tmp_path):
    """A group without its 'name:' line is one problem; the groups after it are still read."""
    path = tmp_path / "name_dict.txt"
    path.write_text("apple/red_apple\n\n011_banana:\nbanana\n\n017_orange:\norange\n")
    problems = Problems("emmoe")
    table = read_name_dict(path, problems)
    assert problems.found == [
        f"{path}:1: group: expected '<canonical name>:' to start a group, got 'apple/red_apple'"
    ]
    assert table["banana"] == "011_banana" and table["orange"] == "017_orange"


def test_a_task_folder_named_with_a_non_ascii_digit_has_no_number():
    """Folder names "²" and "①" pass str.isdigit but not int(): such a folder has no number."""
    from sortie.importers.emmoe import _number

    assert (_number("²"), _number("①"), _number("12"), _number("0")) == (None, None, 12, None)
