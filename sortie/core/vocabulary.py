"""The words records and the wire speak, open to every family: actions, event kinds, step parts.

Core declares the envelopes (an action, an event, a step record, an observation) and the
words every family shares: the body's actions (``Move``, ``Interact``, ``Fly``), the events a
body or the episode loop reports, ``InvalidAction``. A family brings the rest in a
``Vocabulary`` declared next to its rules (``missions/<name>/vocabulary.py``) and added to
``WORDS`` where it is defined; records and the wire derive their models from what is
declared, as Gymnasium's ``Env[ObsType, ActType]`` lets an environment name its own types.
A new family therefore edits no shared file to speak its own words.

A word read from a record or a message must be known before it is read. ``WORDS`` looks
each family up on a miss: the families of installed packages are found by their entry
points (group ``sortie.families``), and a layer above core may add a finder
(``WORDS.add_finder``) for families it knows without an entry point.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sortie.core.errors import ConfigError, did_you_mean
from sortie.core.messages import Image, MessageModel
from sortie.core.registry import installed_entry_points

ENTRY_POINTS = "sortie.families"
"""The entry-point group a package declares its mission families in (``name = "module:attr"``,
the attr a ``sortie.missions.family.Family``)."""


class MessagePart(MessageModel):
    """Base of a family's part of an observation message: strict, and it names its images."""

    def images(self) -> list[Image]:
        """Return the images it carries (a message's image budget counts them)."""
        return []


@dataclass(frozen=True)
class ObservationPart:
    """How a family's observation travels on the wire, beside the shared fields.

    Attributes:
        key: the field of the observation message that holds it (e.g. ``household``).
        model: its message model.
        to_message: the part of a family observation (None: the observation has none).
        from_message: the family observation made of the shared one and the part (raises
            ``WireError`` on a part sortie cannot read).
    """

    key: str
    model: type[MessagePart]
    to_message: Callable[[Any], MessagePart | None]
    from_message: Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Vocabulary:
    """What one family says beyond the shared words.

    Attributes:
        family: the family's name.
        actions: its action types (frozen dataclasses) by the ``type`` name records and the
            wire spell them with.
        events: its event kinds (a ``StrEnum`` whose values records spell).
        step_record: its step record, a ``StepRecord`` subclass whose ``part_model`` is the
            family's per-step record; None: its steps carry no part.
        observation: its observation part on the wire, if its agents see more than the
            shared ``MissionObservation`` (``sortie.remote.wire`` adds it to its messages).
    """

    family: str
    actions: Mapping[str, type] = field(default_factory=dict)
    events: type[StrEnum] | None = None
    step_record: type[Any] | None = None
    observation: ObservationPart | None = None


class Words:
    """Every declared word, by how records spell it; a miss looks the families up once."""

    def __init__(self) -> None:
        self._actions: dict[str, type] = {}
        self._events: dict[str, StrEnum] = {}
        self._families: dict[str, Vocabulary] = {}
        self._finders: list[Callable[[], object]] = []
        self._family_finders: list[Callable[[str], bool]] = []
        self._searched = False
        self._broken: dict[str, str] = {}
        self._plain: set[str] = set()
        """Families a search found speaking only the shared words (not searched for again)."""

    def add_actions(self, actions: Mapping[str, type]) -> None:
        """Declare shared action types by their ``type`` names (core's own, at import)."""
        self._check_actions(actions)
        self._actions.update(actions)

    def add_events(self, kinds: type[StrEnum]) -> None:
        """Declare event kinds; a value already declared by another enum is refused."""
        self._check_events(kinds)
        self._events.update({kind.value: kind for kind in kinds})

    def declare(self, vocabulary: Vocabulary) -> Vocabulary:
        """Add a family's words (called where its vocabulary is defined); return it.

        Every word is checked before any is added, so a refused family leaves no trace.

        Raises:
            ValueError: the family declared other words already, or one of its words is
                another's (an action type name, an event kind).
        """
        known = self._families.get(vocabulary.family)
        if known is not None and known is not vocabulary:
            raise ValueError(f"family {vocabulary.family!r} already declared its words")
        self._check_actions(vocabulary.actions)
        if vocabulary.events is not None:
            self._check_events(vocabulary.events)
        self._check_observation(vocabulary)
        self._actions.update(vocabulary.actions)
        if vocabulary.events is not None:
            self._events.update({kind.value: kind for kind in vocabulary.events})
        self._families[vocabulary.family] = vocabulary
        self._plain.discard(vocabulary.family)
        return vocabulary

    def _check_actions(self, actions: Mapping[str, type]) -> None:
        for name, kind in actions.items():
            known = self._actions.get(name)
            if known is not None and known is not kind:
                raise ValueError(f"action type {name!r} is already {known.__name__}")

    def _check_observation(self, vocabulary: Vocabulary) -> None:
        key = vocabulary.observation.key if vocabulary.observation else None
        for other in self._families.values():
            if key is not None and other.observation is not None and other.observation.key == key:
                raise ValueError(f"observation part {key!r} is already the {other.family} family's")

    def _check_events(self, kinds: type[StrEnum]) -> None:
        for kind in kinds:
            known = self._events.get(kind.value)
            if known is not None and type(known) is not kinds:
                raise ValueError(f"event kind {kind.value!r} is already {type(known).__name__}")

    def add_finder(self, finder: Callable[[], object]) -> None:
        """Add a function that loads families (their vocabularies declare themselves).

        Finders run again at every miss, so a family registered after the first search (a
        test's ``FAMILIES.override``, say) is still found.
        """
        self._finders.append(finder)

    def add_family_finder(self, finder: Callable[[str], bool]) -> None:
        """Add a function that loads one family by name and says whether it knows it.

        ``vocabulary`` asks these first, so that a family's words load that family alone: a
        family that declares none (rescue) no longer loads every other family's descriptor
        at a run's start (30 ms). A family no finder knows is searched for as before.
        """
        self._family_finders.append(finder)

    def action(self, name: str) -> type:
        """Return the action type spelt ``name``; raise ConfigError naming the known ones."""
        if name not in self._actions:
            self._search()
        if name not in self._actions:
            hint = did_you_mean(name, self._actions)
            raise ConfigError(
                f"action type {name!r} is not one of {', '.join(self._actions)}.{hint}"
                + self._unloadable()
            )
        return self._actions[name]

    def action_name(self, kind: type) -> str:
        """Return how records spell the action type ``kind``."""
        for name, known in self._actions.items():
            if known is kind:
                return name
        raise ConfigError(f"{kind.__name__} is not a declared action type")

    def actions(self) -> dict[str, type]:
        """Return every action type by name, the families' included."""
        self._search()
        return dict(self._actions)

    def event(self, value: str) -> StrEnum:
        """Return the event kind spelt ``value``; raise ConfigError naming the known ones."""
        if value not in self._events:
            self._search()
        if value not in self._events:
            allowed = ", ".join(self._events)
            raise ConfigError(f"event kind {value!r} is not one of {allowed}.{self._unloadable()}")
        return self._events[value]

    def events(self) -> tuple[str, ...]:
        """Return every event kind's value, the families' included."""
        self._search()
        return tuple(self._events)

    def vocabulary(self, family: str) -> Vocabulary | None:
        """Return the words ``family`` declared (None: it speaks only the shared ones)."""
        if family not in self._families and family not in self._plain:
            if not self._load_family(family):
                self._search()
            if family not in self._families:
                self._plain.add(family)
        return self._families.get(family)

    def _load_family(self, family: str) -> bool:
        """Return whether a family finder knew ``family`` and loaded it without error."""
        try:
            return any([finder(family) for finder in self._family_finders])
        except Exception:  # noqa: BLE001  (the full search loads it again and says why)
            return False

    def step_record(self, family: str) -> type[Any] | None:
        """Return the step record model ``family`` declared (None: the shared one)."""
        declared = self.vocabulary(family)
        return None if declared is None else declared.step_record

    def families(self) -> dict[str, Vocabulary]:
        """Return every declared family vocabulary by family name."""
        self._search()
        return dict(self._families)

    def _search(self) -> None:
        """Load the families: the added finders (every call), installed entry points (once).

        sortie's own entry points load first, and a package's entry point named like a family
        declared already is skipped, so no package can take a shipped family's words. A
        family that fails to load is noted (``_unloadable``) and does not stop the others.
        """
        for finder in self._finders:
            self._load(finder, "a registered family")
        if self._searched:
            return
        self._searched = True
        points = sorted(
            installed_entry_points(ENTRY_POINTS),
            key=lambda point: (point.dist is None or point.dist.name != "sortie", point.name),
        )
        for point in points:
            if point.name not in self._families:
                self._load(point.load, f"{point.name} ({point.value})")

    def _load(self, load: Callable[[], object], what: str) -> None:
        try:
            load()  # importing a family's descriptor declares its words
        except Exception as error:  # noqa: BLE001  (a broken plug-in must not stop the others)
            self._broken[what] = f"{type(error).__name__}: {error}"

    def _unloadable(self) -> str:
        """Return a sentence naming the plug-in families that failed to load ("": none)."""
        if not self._broken:
            return ""
        listed = "; ".join(f"{what}: {why}" for what, why in sorted(self._broken.items()))
        return f" Families that failed to load: {listed}"


WORDS = Words()
"""The one table of words; core's shared ones are added where they are defined."""


@functools.cache  # read for every replayed step: the hints of a type do not change
def enum_fields(kind: type) -> dict[str, tuple[type[StrEnum], ...]]:
    """Return, for each field of dataclass ``kind`` typed by enums, those enum types."""
    import typing

    hints = typing.get_type_hints(kind)
    found: dict[str, tuple[type[StrEnum], ...]] = {}
    for f in dataclasses.fields(kind):
        hint = hints[f.name]
        members = typing.get_args(hint) or (hint,)
        enums = tuple(m for m in members if isinstance(m, type) and issubclass(m, StrEnum))
        if enums:
            found[f.name] = enums
    return found
