"""Actions to and from plain dicts, and as pydantic models derived from the declared words.

``action_model`` derives one model per declared action type (its fields, and ``type``): the
trajectory record's and the wire's actions are these, so each action is declared once, by
core for the shared ones and by its family for the others (``sortie.core.vocabulary``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum, StrEnum
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, create_model

from sortie.core.actions import Action
from sortie.core.errors import ConfigError
from sortie.core.vocabulary import WORDS, enum_fields

_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Types of field values that ``dataclasses.asdict`` would keep as they are (no copy)."""


def action_to_dict(action: Action) -> dict[str, Any]:
    """Return ``{"type": ..., **fields}`` for an action, enums as their values.

    Every step's record converts its action, so plain values are read directly; an action
    holding anything else (a list, a nested record) goes through ``dataclasses.asdict``,
    which copies it deeply, so the dict shares nothing with the action.
    """
    kind, names = _layout(type(action))
    fields: dict[str, Any] = {"type": kind}
    for name in names:
        value = getattr(action, name)
        if type(value) not in _PLAIN:
            if not isinstance(value, Enum):
                return _copied(action)
            value = value.value
        fields[name] = value
    return fields


def _copied(action: Action) -> dict[str, Any]:
    """Return ``action_to_dict(action)`` for an action holding more than plain values."""
    fields = {
        k: (v.value if isinstance(v, Enum) else v) for k, v in dataclasses.asdict(action).items()
    }
    return {"type": WORDS.action_name(type(action)), **fields}


_LAYOUTS: dict[type, tuple[str, tuple[str, ...]]] = {}


def _layout(kind: type) -> tuple[str, tuple[str, ...]]:
    """Return how records spell action type ``kind`` and its fields' names in order.

    Looked up once per type: the vocabulary finds a type's name by a search over every
    declared type.

    Raises:
        TypeError: ``kind`` is not a dataclass (as ``dataclasses.asdict`` raises).
        ConfigError: ``kind`` is not a declared action type.
    """
    layout = _LAYOUTS.get(kind)
    if layout is None:
        names = tuple(f.name for f in dataclasses.fields(kind))
        layout = _LAYOUTS[kind] = (WORDS.action_name(kind), names)
    return layout


def action_from_dict(data: Mapping[str, Any]) -> Action:
    """Rebuild an action written by ``action_to_dict``; raise ConfigError on bad input."""
    kind = data.get("type")
    cls = WORDS.action(kind if isinstance(kind, str) else repr(kind))
    fields = {k: v for k, v in data.items() if k != "type"}
    for name, enums in enum_fields(cls).items():
        if fields.get(name) is not None:
            fields[name] = _enum(fields[name], enums)
    try:
        action: Action = cls(**fields)
    except TypeError as error:
        raise ConfigError(f"action {dict(data)!r}: {error}") from None
    return action


def _enum(value: Any, enums: tuple[type[StrEnum], ...]) -> Any:
    for enum in enums:
        try:
            return enum(value)
        except ValueError:
            continue
    allowed = ", ".join(m.value for e in enums for m in e)
    raise ConfigError(f"action value {value!r} is not one of: {allowed}")


_MODELS: dict[tuple[str, type[BaseModel], Any], type[BaseModel]] = {}


def action_model(name: str, base: type[BaseModel], numbers: Any = None) -> type[BaseModel]:
    """Return the model of the action type spelt ``name``: ``type`` and the action's fields.

    ``numbers`` replaces the annotation of every ``float`` field when given (a record keeps
    the numbers an agent sent exactly: ``int | float | None``, a non-finite one read back as
    None). Models are made once per type and base.
    """
    key = (name, base, numbers)  # a type union hashes: no repr on every recorded step
    if key not in _MODELS:
        _MODELS[key] = _model(name, WORDS.action(name), base, numbers)
    return _MODELS[key]


def action_models(base: type[BaseModel], numbers: Any = None) -> dict[str, type[BaseModel]]:
    """Return the model of every declared action type (the families' too), by type name."""
    return {name: action_model(name, base, numbers) for name in WORDS.actions()}


def _model(name: str, action: type, base: type[BaseModel], numbers: Any) -> type[BaseModel]:
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
