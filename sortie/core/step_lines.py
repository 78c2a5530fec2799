"""A step's record as the runtime makes it, and its JSON line written without the model.

Building and validating a ``StepRecord`` for every step, then serialising it, cost more than
the simulator's own step. A ``StepDraft`` holds the step's values as the runtime made them;
``StepDraft.line`` writes its JSON line straight from them when every value is of the exact
plain type the model would keep unchanged (a float that is finite, a str that is valid
Unicode, an action whose fields are numbers, strings or declared enum values...), and then
the line is byte for byte the model's own ``model_dump_json()``: the same key order, the same
float text, the same escapes. Any other value (an int where a float belongs, a NaN, a lone
surrogate, an undeclared event kind, a family's step model with fields of its own) sends the
step through the model (``StepDraft.record``), which refuses or converts it as it always has.
``StepRecord`` stays the schema: records are read back and validated with it
(``tests/core/test_step_lines.py`` holds the two writers to the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from sortie.core.columns import StepRow
from sortie.core.episode import MAX_COORDINATE
from sortie.core.observation import Event
from sortie.core.pose import Pose
from sortie.core.records import (
    RECORDED_NUMBERS,
    EventRecord,
    ModelCallRecord,
    RecordedActionBase,
    StageStatus,
    StepPart,
    StepRecord,
    Timings,
    recorded_action,
)
from sortie.core.records_io import MAX_LINE_BYTES
from sortie.core.serialize import action_model
from sortie.core.vocabulary import WORDS

Check = Callable[[Any], bool]
"""Whether a field's model keeps a value as it is (so dumps it as the plain value)."""


@dataclass(slots=True)
class StepDraft:
    """One step's record as the runtime made it, before any check (see the module docstring).

    ``line`` and ``record`` are made once each; ``frames`` and ``part`` may be set before.
    """

    model: type[StepRecord]
    """The step record model of the episode's family (``records.step_model``)."""
    index: int
    pose: Pose
    action: dict[str, Any]
    """The action as ``sortie.core.serialize.action_to_dict`` gives it."""
    events: Sequence[Event]
    stages: dict[str, StageStatus]
    stage: str | None
    target_distance: float | None
    collisions: int
    clock_sim: float
    clock_latency: float
    holding: str | None
    timings: tuple[float, float, float]
    """Wall seconds of the agent, the backend and the renderer."""
    agent_output: str | None = None
    model_calls: Sequence[ModelCallRecord] = ()
    frames: dict[str, str] | None = None
    """The frames' hashes, when they are kept (None: the record's default, none)."""
    part: StepPart | None = None
    _line: bytes | None = field(default=None, repr=False)
    _record: StepRecord | None = field(default=None, repr=False)
    _plain: bool = field(default=False, repr=False)
    """Whether the line was written from checked plain values (``_step_line``)."""

    def record(self) -> StepRecord:
        """Return the step's validated record (raises as the model does on a bad value)."""
        if self._record is None:
            record = self.model(
                index=self.index,
                pose=self.pose,
                action=recorded_action(self.action),
                events=[
                    EventRecord(kind=e.kind, target=e.target, detail=e.detail) for e in self.events
                ],
                stages=self.stages,
                stage=self.stage,
                target_distance=self.target_distance,
                collisions=self.collisions,
                clock_sim=self.clock_sim,
                clock_latency=self.clock_latency,
                holding=self.holding,
                timings=Timings(
                    agent=self.timings[0], backend=self.timings[1], render=self.timings[2]
                ),
                agent_output=self.agent_output,
                model_calls=list(self.model_calls),
            )
            update: dict[str, Any] = {}
            if self.part is not None:
                update["part"] = self.part
            if self.frames is not None:
                update["frames"] = self.frames
            self._record = record.model_copy(update=update) if update else record
        return self._record

    def model_copy(self, *, update: Mapping[str, Any]) -> StepDraft:
        """Return a copy with ``update``'s fields set, as a record's ``model_copy`` does.

        So a family that sets its step's part on what its base's ``_record`` made keeps
        working: ``super()._record(...).model_copy(update={"part": ...})``. Only the fields a
        draft holds as its record does can be set (``COPIED``).
        """
        if not update.keys() <= COPIED:
            unknown = ", ".join(sorted(update.keys() - COPIED))
            allowed = ", ".join(sorted(COPIED))
            raise TypeError(f"StepDraft.model_copy: cannot set {unknown}; allowed: {allowed}")
        return replace(self, **update, _line=None, _record=None, _plain=False)

    def line(self) -> bytes:
        """Return the step's JSON line in UTF-8: the record's ``model_dump_json()``, byte for byte.

        Raises as ``record`` does on a value the model refuses.
        """
        if self._line is None:
            fast = _step_line(self)
            self._plain = fast is not None
            self._line = line_of(self.record()).encode() if fast is None else fast
        return self._line

    def readable(self) -> bool:
        """Return whether the step's line passes a reader's checks by how it was written.

        True for a line written from checked plain values with no model calls and no part:
        nested three deep at most, finite numbers, integers of at most 18 digits, text that
        is valid Unicode (``records_io`` reads it back as written). Otherwise a recorder
        scans the line for what a reader refuses.
        """
        line = self.line()
        return (
            self._plain
            and not self.model_calls
            and self.part is None
            and len(line) <= MAX_LINE_BYTES
        )

    def row(self) -> StepRow:
        """Return what the columns keep of the step: the values its line was written from."""
        if self._line is None:
            self.line()  # the values checked (or the record made, when they were not plain)
        if self._record is not None:
            return StepRow.of(self._record)
        pose, events = self.pose, self.events
        return StepRow(
            (pose.x, pose.y, pose.z),
            self.collisions,
            self.target_distance,
            self.stage,
            self.action["type"],
            self.timings,
            tuple([e.kind._value_ for e in events]) if events else (),
        )


COPIED = frozenset(
    {"index", "pose", "stages", "stage", "target_distance", "collisions", "clock_sim"}
    | {"clock_latency", "holding", "agent_output", "model_calls", "frames", "part"}
)
"""The fields a draft holds as its record does (``StepDraft.model_copy`` may set them)."""


def line_of(record: BaseModel) -> str:
    """Return ``record`` as one JSON line; text that is not valid Unicode is mended first.

    An agent's words may hold a lone surrogate (from a model server's escaped half of an emoji,
    say), which UTF-8 cannot carry: it becomes "?", so the step is kept and reads back.
    """
    try:
        return record.model_dump_json()
    except PydanticSerializationError:
        mended = _mended(record.model_dump())
        return type(record).model_validate(mended).model_dump_json()


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mended(v) for v in value]
    return value


# --- the fast writer ------------------------------------------------------------------------
def _step_line(draft: StepDraft) -> bytes | None:
    """Return the draft's line as the model writes it, or None when a value is not plain.

    The line is the same dict the model dumps, written by pydantic's own JSON writer
    (``to_json``): the same float text and escapes as ``model_dump_json``. Non-finite
    numbers are written as null: only an action may hold one (its model writes null too);
    everywhere else the checks below refuse them, as the model does.
    """
    values = _plain_values(draft)
    if values is None:
        return None
    try:
        return to_json(values, inf_nan_mode="null")
    except PydanticSerializationError:
        return None  # a lone surrogate in some text: the model's writer mends it


def _plain_values(draft: StepDraft) -> dict[str, Any] | None:
    """Return the step's fields as the model would dump them, or None if one is not plain."""
    pose, timings, stage, holding, said = (
        draft.pose,
        draft.timings,
        draft.stage,
        draft.holding,
        draft.agent_output,
    )
    if not (
        _plain_model(draft.model)
        and _small_integer(draft.index)
        and type(pose) is Pose
        and _coordinate(pose.x)
        and _coordinate(pose.y)
        and _coordinate(pose.z)
        and _coordinate(pose.yaw)
        and (stage is None or type(stage) is str)
        and (draft.target_distance is None or _finite(draft.target_distance))
        and _small_integer(draft.collisions)
        and _finite(draft.clock_sim)
        and _finite(draft.clock_latency)
        and (holding is None or type(holding) is str)
        and type(timings) is tuple
        and len(timings) == 3
        and _finite(timings[0])
        and _finite(timings[1])
        and _finite(timings[2])
        and (said is None or type(said) is str)
        and (not draft.model_calls or _calls_plain(draft.model_calls))
        and (draft.frames is None or _texts_plain(draft.frames))
        and (draft.part is None or isinstance(draft.part, StepPart))
        and _action_plain(draft.action)
    ):
        return None
    stages = _stages(draft.stages)
    events = _events(draft.events) if draft.events else []
    if stages is None or events is None:
        return None
    return {
        "kind": "step",
        "index": draft.index,
        "pose": [pose.x, pose.y, pose.z, pose.yaw],
        "action": draft.action,
        "events": events,
        "stages": stages,
        "stage": stage,
        "target_distance": draft.target_distance,
        "collisions": draft.collisions,
        "clock_sim": draft.clock_sim,
        "clock_latency": draft.clock_latency,
        "holding": holding,
        "timings": {"agent": timings[0], "backend": timings[1], "render": timings[2]},
        "agent_output": said,
        "model_calls": list(draft.model_calls),
        "frames": {} if draft.frames is None else draft.frames,
        "round": draft.part,
    }


_PLAIN_MODELS: dict[type[StepRecord], bool] = {}


def _plain_model(model: type[StepRecord]) -> bool:
    """Return whether ``model`` dumps a step as ``_plain_values`` gives it (asked once a model).

    A family's own model may add fields or change how one is written: its steps go through
    the model.
    """
    plain = _PLAIN_MODELS.get(model)
    if plain is None:
        plain = _PLAIN_MODELS[model] = model is StepRecord or (
            _shape(model) == _shape(StepRecord) and model.model_config == StepRecord.model_config
        )
    return plain


def _shape(model: type[StepRecord]) -> tuple[Any, ...]:
    """Return what decides how ``model`` writes a step: its fields and its decorators."""
    decorators = model.__pydantic_decorators__
    fields = tuple(
        (name, repr(info.annotation), repr(info.default), info.alias, info.serialization_alias)
        + (info.exclude, info.exclude_if)
        for name, info in model.model_fields.items()
    )
    return (
        fields,
        tuple(decorators.field_validators),
        tuple(decorators.field_serializers),
        tuple(decorators.model_serializers),
        tuple(decorators.model_validators),
        tuple(model.model_computed_fields),
    )


SMALL_INTEGER = 10**18
"""Integers written by the fast writer stay below this: 18 digits, which every reader takes
(a larger one goes through the model, and its record is scanned for it: ``records_io``)."""


def _small_integer(value: Any) -> bool:
    return type(value) is int and -SMALL_INTEGER < value < SMALL_INTEGER


def _finite(value: Any) -> bool:
    """Return whether ``value`` is a finite float (the model refuses NaN and converts ints)."""
    return type(value) is float and value - value == 0.0


def _coordinate(value: Any) -> bool:
    """Return whether ``value`` is a float a pose keeps unchanged (``episode.PoseField``)."""
    return type(value) is float and -MAX_COORDINATE <= value <= MAX_COORDINATE


def _stages(stages: Any) -> dict[str, str] | None:
    """Return each stage's status value by name, or None if one is not a name and a status."""
    if type(stages) is not dict:
        return None
    values = {}
    for name, status in stages.items():
        if type(name) is not str or type(status) is not StageStatus:
            return None
        values[name] = status._value_  # the enum's own value, without its property's cost
    return values


def _texts_plain(texts: Any) -> bool:
    return type(texts) is dict and all(
        type(key) is str and type(value) is str for key, value in texts.items()
    )


def _calls_plain(calls: Any) -> bool:
    return all(type(call) is ModelCallRecord for call in calls)


def _events(events: Sequence[Event]) -> list[dict[str, Any]] | None:
    """Return the events as their records dump them, or None if one is not plain."""
    dumped = []
    for event in events:
        if type(event) is not Event:
            return None
        kind, target, detail = event.kind, event.target, event.detail
        if not (
            _declared_event(kind)
            and (target is None or type(target) is str)
            and type(detail) is str
        ):
            return None
        dumped.append({"kind": kind._value_, "target": target, "detail": detail})
    return dumped


def _declared_event(kind: Any) -> bool:
    """Return whether ``kind`` is a declared event kind (``EventRecord`` refuses any other)."""
    if not isinstance(kind, StrEnum):
        return False
    try:
        return WORDS.event(kind.value) is kind
    except Exception:  # noqa: BLE001 - the model reports it, as it always has
        return False


# --- actions ----------------------------------------------------------------------------------
def _action_plain(data: Any) -> bool:
    """Return whether ``data`` dumps as its recorded model would (its fields in its order)."""
    if type(data) is not dict:
        return False
    kind = data.get("type")
    fields = _action_fields(kind) if type(kind) is str else None
    if fields is None or tuple(data) != fields[0]:
        return False
    values = iter(data.values())
    next(values)  # the type, checked above
    for check in fields[1]:
        if not check(next(values)):
            return False
    return True


_ACTION_FIELDS: dict[str, tuple[tuple[str, ...], tuple[Check, ...]] | None] = {}


def _action_fields(kind: str) -> tuple[tuple[str, ...], tuple[Check, ...]] | None:
    """Return action type ``kind``'s keys in order and each field's check, made once a type.

    None: a type the vocabulary does not declare, or one with a field of another kind than
    numbers, strings, booleans and declared enum values: its steps go through the model.
    """
    if kind not in _ACTION_FIELDS:
        _ACTION_FIELDS[kind] = _planned(kind)
    return _ACTION_FIELDS[kind]


def _planned(kind: str) -> tuple[tuple[str, ...], tuple[Check, ...]] | None:
    try:
        model = action_model(kind, RecordedActionBase, RECORDED_NUMBERS)
    except Exception:  # noqa: BLE001 - an undeclared type: the model reports it
        return None
    if model.model_config.get("ser_json_inf_nan", "null") != "null":
        return None
    checks = []
    for info in model.model_fields.values():
        check = _check(info.annotation)
        if check is None or info.alias is not None or info.serialization_alias is not None:
            return None
        checks.append(check)
    if list(model.model_fields)[:1] != ["type"]:
        return None
    return tuple(model.model_fields), tuple(checks[1:])


def _check(annotation: Any) -> Check | None:
    """Return the check of a value the field keeps as it is, or None for any other kind."""
    if annotation == RECORDED_NUMBERS:
        return _recorded_number
    if get_origin(annotation) in (Union, UnionType) and type(None) in get_args(annotation):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        inner = _check(rest[0]) if len(rest) == 1 else None
        return None if inner is None else _or_none(inner)
    if get_origin(annotation) is Literal:
        return _literal(frozenset(get_args(annotation)))
    if annotation is int:
        return _small_integer
    exact = {str: str, bool: bool}.get(annotation)
    if exact is not None:
        return lambda value: type(value) is exact
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return _member_of(frozenset(m.value for m in annotation))
    return None


def _recorded_number(value: Any) -> bool:
    """Return whether ``value`` is a number a record keeps as sent (a NaN: written as null)."""
    return value is None or type(value) is float or _small_integer(value)


def _or_none(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _literal(values: frozenset[Any]) -> Check:
    return lambda value: type(value) is str and value in values


def _member_of(values: frozenset[str]) -> Check:
    return lambda value: type(value) is str and value in values
