"""A step's line written from its draft is the line its record's model writes, byte for byte."""

import dataclasses
import math
import random
import struct
from enum import StrEnum

import pytest
from pydantic import ValidationError

from sortie.core.actions import FlightPrimitive, Fly, Interact, Interaction, InvalidAction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Event, EventKind
from sortie.core.pose import Pose
from sortie.core.records import ModelCallRecord, StageStatus, StepRecord, step_model
from sortie.core.serialize import action_to_dict
from sortie.core.step_lines import StepDraft, _step_line, line_of
from sortie.missions.aerial.vocabulary import AerialEvent, TaskAction, TaskActionKind
from sortie.missions.household.records import AttemptRecord, RoundRecord, RoundStatus
from sortie.missions.household.vocabulary import Subtask

TEXTS = [
    "",
    "S1",
    'a "quoted" \\ back\\slash',
    "line\nbreak\ttab\r\x00\x1f\x7f\b\f",
    "é ü ß 東京 \u2028 \u2029 \ufeff",
    "emoji 😀 and 𝄞",
    "</script><b>&amp;</b>",
    "x" * 3000,
]
SPECIAL_FLOATS = [
    0.0,
    -0.0,
    1e-5,
    -2.5e-5,
    9.99999e-5,
    1e-4,
    5e-7,
    5e-324,
    1e15,
    1e16,
    -1.2345678901234567e17,
    1.7976931348623157e308,
    0.1 + 0.2,
    1 / 3,
]


def draft(**changes) -> StepDraft:
    """Return a plain rescue step's draft, with ``changes``."""
    values = {
        "model": StepRecord,
        "index": 3,
        "pose": Pose(1.5, -2.25, 0.0, 90.0),
        "action": action_to_dict(Move(12.5, 0.75)),
        "events": (),
        "stages": {"S1": StageStatus.DONE, "S2": StageStatus.ACTIVE},
        "stage": "S2",
        "target_distance": 4.125,
        "collisions": 0,
        "clock_sim": 0.6000000000000001,
        "clock_latency": 0.6000000000000001,
        "holding": None,
        "timings": (2.3745000021335727e-05, 0.0001906030000213832, 5.707999974902123e-06),
    }
    return StepDraft(**{**values, **changes})


def model_line(step: StepDraft) -> bytes:
    """Return the line the record's model writes for ``step`` (a copy: nothing cached)."""
    return line_of(dataclasses.replace(step, _line=None, _record=None).record()).encode()


def assert_fast_and_same(step: StepDraft) -> None:
    """Assert that ``step``'s line is written without the model and equals the model's."""
    fast = _step_line(step)
    assert fast is not None, step
    assert fast == model_line(step)
    assert step.line() == fast


def any_float(rng: random.Random) -> float:
    """Return a finite float: any bit pattern, a decimal of a few digits, or a small time."""
    pick = rng.random()
    if pick < 0.3:
        while not math.isfinite(value := struct.unpack("d", rng.randbytes(8))[0]):
            pass
        return value
    if pick < 0.6:
        return round(rng.uniform(-1000, 1000), rng.randint(0, 6))
    return rng.uniform(0, 1) * 10.0 ** rng.randint(-9, 3)


def coordinate(rng: random.Random) -> float:
    """Return a float a pose keeps: within ±1e6."""
    value = any_float(rng)
    return value if abs(value) <= 1e6 else value % 1e6


def any_action(rng: random.Random) -> dict:
    """Return one of the declared actions, with varied values, as ``action_to_dict`` gives it."""
    text = rng.choice(TEXTS)
    action = rng.choice(
        [
            Move(any_float(rng), any_float(rng), rng.choice([None, 10.0, -30.0])),
            Move(rng.randint(-10, 10), -(10**18) + 1, None),  # integers as sent
            Interact(rng.choice(list(Interaction))),
            Fly(rng.choice(list(FlightPrimitive)), any_float(rng), rng.choice([None, text])),
            InvalidAction(text, "not JSON"),
            TaskAction(rng.choice(list(TaskActionKind)), rng.choice([None, text])),
            Subtask("pick", text, "image_nav", rng.choice([None, "table_0"])),
        ]
    )
    return action_to_dict(action)


def any_call(rng: random.Random) -> ModelCallRecord:
    """Return a model call, its optional fields at their defaults (left out) or set."""
    extras = {
        "waited": rng.choice([0.0, any_float(rng) % 10]),
        "served": rng.choice([None, "gemma-3"]),
        "cost": rng.choice([None, 0.0, 1.25e-06]),
        "reasoning": rng.choice([None, rng.choice(TEXTS)]),
    }
    return ModelCallRecord(
        model="qwen", latency=abs(any_float(rng)), tokens_in=rng.randint(0, 10**6), **extras
    )


def any_round(rng: random.Random) -> RoundRecord:
    """Return a household round with an attempt and its path."""
    path = [(coordinate(rng), coordinate(rng), 0.0) for _ in range(rng.randint(0, 4))]
    attempt = AttemptRecord(skill="image_nav", success=rng.random() < 0.5, path=path)
    return RoundRecord(
        round=rng.randint(1, 50),
        action="go_to",
        target=rng.choice(TEXTS)[:200],
        status=rng.choice(list(RoundStatus)),
        attempts=[attempt],
    )


def any_draft(rng: random.Random) -> StepDraft:
    """Return a step's draft of varied, plain values (the family's model keeps them all)."""
    household = rng.random() < 0.2
    events = [
        Event(EventKind.CONTACT, "shelf_1"),
        Event(EventKind.INVALID_ACTION, None, rng.choice(TEXTS)),
        Event(AerialEvent.CLAMPED, None, "magnitude 99 to 20"),
    ]
    floats = [any_float(rng) for _ in range(6)]
    return draft(
        model=step_model("household") if household else StepRecord,
        index=rng.choice([1, 1500, 10**18 - 1]),
        pose=Pose(*(coordinate(rng) for _ in range(4))),
        action=any_action(rng),
        events=tuple(rng.sample(events, rng.randint(0, 3))),
        stages={name: rng.choice(list(StageStatus)) for name in rng.sample(TEXTS, 3)},
        stage=rng.choice([None, "S1", rng.choice(TEXTS)]),
        target_distance=rng.choice([None, floats[0]]),
        collisions=rng.choice([0, 1]),
        clock_sim=floats[1],
        clock_latency=floats[2],
        holding=rng.choice([None, "person_3", rng.choice(TEXTS)]),
        timings=(floats[3], floats[4], floats[5]),
        agent_output=rng.choice([None, rng.choice(TEXTS)]),
        model_calls=tuple(any_call(rng) for _ in range(rng.randint(0, 2))),
        frames=rng.choice([None, {}, {"rgb": "ab12", rng.choice(TEXTS): "cd"}]),
        part=any_round(rng) if household and rng.random() < 0.8 else None,
    )


def test_varied_plain_steps_are_written_as_the_model_writes_them():
    """Two thousand steps of varied values: the fast line is the model's, byte for byte."""
    rng = random.Random(44)
    for _ in range(2000):
        assert_fast_and_same(any_draft(rng))


@pytest.mark.parametrize("value", SPECIAL_FLOATS)
def test_floats_are_written_in_the_models_text(value):
    """Zeros, the edges of the written-out range, the smallest and largest: the model's text."""
    assert_fast_and_same(draft(target_distance=value, clock_sim=abs(value), timings=(value,) * 3))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_an_actions_non_finite_number_is_written_as_null(value):
    """An agent's NaN or infinity is kept in the action as null, as its model writes it."""
    step = draft(action=action_to_dict(Move(value, 1.0, value)))
    assert_fast_and_same(step)
    assert b'"turn":null' in step.line()


@pytest.mark.parametrize(
    "changes",
    [
        {"pose": Pose(math.nan, 0.0, 0.0, 0.0)},
        {"pose": Pose(2e6, 0.0, 0.0, 0.0)},
        {"target_distance": math.inf},
        {"clock_sim": math.nan},
        {"timings": (0.0, math.nan, 0.0)},
    ],
)
def test_a_non_finite_or_out_of_range_value_is_refused_as_the_model_refuses_it(changes):
    """A NaN the backend reports still fails the step, with the model's own error."""
    step = draft(**changes)
    assert _step_line(step) is None
    with pytest.raises(ValidationError) as fast:
        step.line()
    with pytest.raises(ValidationError) as model:
        dataclasses.replace(step, _line=None).record()
    assert str(fast.value) == str(model.value)


@pytest.mark.parametrize(
    "changes",
    [
        {"pose": Pose(1, 2, 0, 90)},  # integers: the model makes them floats
        {"clock_sim": 1, "target_distance": 2},
        {"action": {"type": "interact", "kind": Interaction.GRAB}},  # an enum, not its value
        {"stages": {"S1": "done"}},  # a status's value, not the enum
        {"index": True},
        {"events": (Event(EventKind.CONTACT, 7),)},  # not text: refused by the model
    ],
)
def test_a_value_the_model_converts_or_refuses_goes_through_the_model(changes):
    """Whatever is not exactly a plain value is left to the model: its line or its error."""
    step = draft(**changes)
    assert _step_line(step) is None
    try:
        expected = model_line(step)
    except (ValidationError, ValueError, ConfigError) as error:
        with pytest.raises(type(error)):
            step.line()
    else:
        assert step.line() == expected


@pytest.mark.parametrize(
    "changes",
    [{"index": 10**18}, {"action": action_to_dict(Move(2**70, 1.0))}, {"collisions": -(10**19)}],
)
def test_an_integer_of_19_digits_or_more_is_written_by_the_model_and_scanned_for(changes):
    """A large integer's line is the model's, and it is not vouched for: readers refuse some."""
    step = draft(**changes)
    assert _step_line(step) is None
    assert step.line() == model_line(step)
    assert not step.readable()


def test_a_plain_steps_line_is_vouched_for_unless_it_holds_calls_or_a_part():
    """Model calls and a family's part are written by their models: their lines are scanned."""
    rng = random.Random(3)
    assert draft().readable()
    assert not draft(model_calls=(any_call(rng),)).readable()
    assert not draft(model=step_model("household"), part=any_round(rng)).readable()


def test_an_undeclared_event_kind_is_refused_as_the_model_refuses_it():
    """A family's kind that no vocabulary declares fails the step, as before."""

    class Stray(StrEnum):
        ODD = "odd"

    step = draft(events=(Event(Stray.ODD),))
    assert _step_line(step) is None
    with pytest.raises(ValidationError, match="undeclared"):
        step.line()


def test_an_undeclared_action_type_is_refused_as_the_model_refuses_it():
    """An action dict of a type no vocabulary declares fails the step, naming the known ones."""
    step = draft(action={"type": "teleport", "to": 3})
    with pytest.raises(ConfigError, match="teleport"):
        step.line()


def test_a_lone_surrogate_is_mended_by_the_models_writer():
    """Text UTF-8 cannot carry becomes '?' in the line, as the model's writer mends it."""
    step = draft(agent_output="I see \ud83d", action=action_to_dict(InvalidAction("a \udc00", "x")))
    back = StepRecord.model_validate_json(step.line())
    assert (back.agent_output, back.action.raw) == ("I see ?", "a ?")


def test_the_row_is_the_one_the_record_gives():
    """What the columns keep of a step is the same read from its draft or from its record."""
    from sortie.core.columns import StepRow

    rng = random.Random(7)
    for _ in range(200):
        step = any_draft(rng)
        assert step.row() == StepRow.of(dataclasses.replace(step, _line=None).record())


def test_every_line_vouched_for_passes_the_readers_checks():
    """A line a draft calls readable decodes with the reader's checks and reads back as written."""
    from sortie.core.records_io import _decode_line

    rng = random.Random(5)
    vouched = 0
    for _ in range(1000):
        step = any_draft(rng)
        if step.readable():
            vouched += 1
            value, problem = _decode_line(step.line())
            assert problem is None
            back = step.model.model_validate(value)
            assert back.model_dump_json().encode() == step.line()
    assert vouched > 200


def test_a_family_sets_its_part_on_a_draft_as_on_a_record():
    """``model_copy(update=...)`` keeps a family's ``_record`` override working; odd keys fail."""
    rng = random.Random(9)
    part = any_round(rng)
    step = draft(model=step_model("household"))
    step.line()
    copied = step.model_copy(update={"part": part})
    assert copied.part is part and step.part is None
    assert copied.line() == model_line(copied) and b'"round":{"round"' in copied.line()
    with pytest.raises(TypeError, match="cannot set timings; allowed: "):
        step.model_copy(update={"timings": None})
