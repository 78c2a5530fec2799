"""EMMOE's protocol messages read and written: planner lines, subtasks, answers, views."""

import json
import socket

import pytest

from sortie.core.errors import ConfigError
from sortie.missions.household.records import ErrorCode, RoundRecord, RoundStatus, Verb
from sortie.remote.emmoe_link import (
    Connection,
    PlannerLine,
    ProtocolError,
    answer_of,
    encode,
    parse_line,
    subtask_of,
)


def failed(action: str, target: str, code: ErrorCode, **fields) -> RoundRecord:
    """Return a failed round of ``action`` on ``target`` with ``code``."""
    return RoundRecord(
        round=1, action=action, target=target, status=RoundStatus.FAILURE, code=code, **fields
    )


def test_a_planner_line_is_read_into_its_words_model_and_inventory():
    """A put line with a place gives three words, the model and the inventory."""
    line = parse_line("Put, apple, fridge|RT-1-X|apple")
    assert line == PlannerLine(("Put", "apple", "fridge"), "RT-1-X", "apple")


def test_a_bare_end_is_read_as_the_planner_giving_up():
    """A message that is only End (no fields) is no subtask."""
    assert parse_line(" End ") is None


def test_a_subtask_with_three_names_is_malformed():
    """An action with three names is refused, saying what a subtask looks like."""
    with pytest.raises(ProtocolError, match="up to two names"):
        parse_line("Put, apple, pear, fridge|RT-1-X|apple")


def test_an_empty_inventory_is_malformed():
    """The inventory field must say None or the names held."""
    with pytest.raises(ProtocolError, match="inventory"):
        parse_line("Pick, apple|RT-1-X| ")


def test_emmoes_model_names_become_sortie_skills():
    """NoMaD is image_nav, PixNav object_nav, RT-1-X grasp, octo articulate, M3 all_in_one."""
    models = ["NoMaD", "PixNav", "RT-1-X", "octo", "M3"]
    skills = [subtask_of(PlannerLine(("Go to", "sofa"), m, "None"), ()).skill for m in models]
    assert skills == ["image_nav", "object_nav", "grasp", "articulate", "all_in_one"]


def test_a_put_with_one_name_puts_the_held_thing_on_it():
    """A put that names only the place puts what the gripper holds there."""
    subtask = subtask_of(PlannerLine(("Put", "fridge"), "RT-1-X", "apple"), ("apple_0",))
    assert (subtask.target, subtask.place) == ("apple_0", "fridge")


def test_a_put_into_a_closed_container_is_answered_with_emmoes_l3_on_the_place():
    """An L3 put names the place, as EMMOE's executor words it."""
    round_ = failed("Put", "apple", ErrorCode.L3, place="fridge", verb=Verb.PUT)
    assert answer_of(round_) == (
        "Unable to put, the fridge is closed, you should open it first",
        "fail",
    )


def test_an_unknown_model_is_answered_with_the_planners_own_word():
    """An F1 for a model that names no offered skill says the model, not the action."""
    round_ = failed("Pick", "apple", ErrorCode.F1, skill="GPT", verb=Verb.PICK)
    assert answer_of(round_) == (
        "GPT is not in the model list! Please choose another model",
        "fail",
    )


def test_an_unknown_action_is_answered_with_emmoes_f1():
    """An F1 for an action outside the list is EMMOE's "not in the action list" string."""
    feedback, signal = answer_of(failed("Fly", "", ErrorCode.F1))
    assert signal == "fail" and feedback.startswith("fly is not in the action list!")


def test_a_message_longer_than_emmoes_reads_is_refused():
    """Views paths that would not fit in 1024 bytes are refused with the fix."""
    with pytest.raises(ConfigError, match="shorter --views"):
        encode(["/x" * 300, "/y" * 300])


def test_an_error_answer_fits_one_message_however_long_the_error():
    """A refusal of a long, non-ASCII error still reaches the planner as one JSON answer."""
    ours, theirs = socket.socketpair()
    Connection(ours, timeout=1.0, peer="test").refuse("é" * 2000)
    data = theirs.recv(4096)
    theirs.close()
    feedback, signal = json.loads(data)
    assert len(data) <= 1024 and signal == "fail" and feedback.startswith("error: éé")
