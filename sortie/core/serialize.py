"""Actions to and from plain dicts, and as pydantic models derived from the vocabulary.

``action_models`` derives one model per action type of ``sortie.core.actions`` (its fields,
and ``type``): the trajectory record's and the wire's actions are these, so the vocabulary
is declared once.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, create_model

from sortie.core.actions import (
    ACTION_TYPES,
    TYPE_NAMES,
    Action,
    FlightPrimitive,
    Interaction,
    TaskActionKind,
)
from sortie.core.errors import ConfigError

_ENUMS = {"kind": (Interaction, TaskActionKind), "primitive": (FlightPrimitive,)}


def action_to_dict(action: Action) -> dict[str, Any]:
    """Return ``{"type": ..., **fields}`` for an action, enums as their values."""
    fields = {
        k: (v.value if isinstance(v, Enum) else v) for k, v in dataclasses.asdict(action).items()
    }
    return {"type": TYPE_NAMES[type(action)], **fields}


def action_from_dict(data: dict[str, Any]) -> Action:
    """Rebuild an action written by ``action_to_dict``; raise ConfigError on bad input."""
    kind = data.get("type")
    if kind not in ACTION_TYPES:
        raise ConfigError(f"action type {kind!r} is not one of {', '.join(ACTION_TYPES)}")
    cls = ACTION_TYPES[kind]
    fields = {k: v for k, v in data.items() if k != "type"}
    for name, enums in _ENUMS.items():
        if name in fields:
            fields[name] = _enum(fields[name], [e for e in enums if _fits(e, cls)])
    try:
        action: Action = cls(**fields)
    except TypeError as error:
        raise ConfigError(f"action {data!r}: {error}") from None
    return action


def _fits(enum: type[Enum], cls: type) -> bool:
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    return any(enum.__name__ in str(t) for t in hints.values())


def _enum(value: Any, enums: list[type[Enum]]) -> Any:
    for enum in enums:
        try:
            return enum(value)
        except ValueError:
            continue
    allowed = ", ".join(m.value for e in enums for m in e)
    raise ConfigError(f"action value {value!r} is not one of: {allowed}")


def action_models(
    base: type[BaseModel], numbers: Any = None
) -> dict[type[Action], type[BaseModel]]:
    """Return a model per action type: ``type`` (its name) and the action's fields.

    ``numbers`` replaces the annotation of every ``float`` field when given (a record keeps
    the numbers an agent sent exactly: ``int | float | None``, a non-finite one read back as
    None).
    """
    return {action: _model(name, action, base, numbers) for name, action in ACTION_TYPES.items()}


def _model(name: str, action: type[Action], base: type[BaseModel], numbers: Any) -> type[BaseModel]:
    hints = get_type_hints(action)
    tag: Any = Literal[name]
    fields: dict[str, Any] = {"type": (tag, ...)}
    for f in dataclasses.fields(action):
        hint = hints[f.name]
        if numbers is not None and hint in (float, float | None):
            hint = numbers
        fields[f.name] = (hint, ... if f.default is dataclasses.MISSING else f.default)
    model: type[BaseModel] = create_model(
        f"{action.__name__}{base.__name__}", __base__=base, __doc__=action.__doc__, **fields
    )
    return model
