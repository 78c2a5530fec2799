"""Actions to and from plain dicts, for trajectory records and remote agents."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

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
