"""The table of words: what families declare, what it refuses, and how it finds them."""

from dataclasses import dataclass
from enum import StrEnum
from importlib import metadata

import pytest

from sortie.core import vocabulary
from sortie.core.actions import FamilyAction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import EventKind
from sortie.core.records import EventRecord, StepRecord
from sortie.core.vocabulary import Vocabulary, Words


@dataclass(frozen=True, slots=True)
class Wave(FamilyAction):
    """A test family's own action."""

    hand: str = "left"


class Noise(StrEnum):
    """A test family's own events."""

    BEEP = "beep"


class Clash(StrEnum):
    """Events spelt like another family's."""

    BEEP = "beep"


def test_a_family_declares_its_words_and_they_are_found_by_name():
    words = Words()
    words.add_actions({"move": Move})
    words.declare(Vocabulary("waving", actions={"wave": Wave}, events=Noise))
    assert words.action("wave") is Wave and words.action_name(Wave) == "wave"
    assert words.event("beep") is Noise.BEEP and words.vocabulary("waving").events is Noise


def test_a_refused_family_leaves_no_word_behind():
    """Every word is checked before any is added: a clash on an event keeps its actions out."""
    words = Words()
    words.declare(Vocabulary("noisy", events=Noise))
    with pytest.raises(ValueError, match="event kind 'beep' is already Noise"):
        words.declare(Vocabulary("waving", actions={"wave": Wave}, events=Clash))
    with pytest.raises(ConfigError, match="action type 'wave' is not one of"):
        words.action("wave")
    assert words.vocabulary("waving") is None


def test_an_action_name_taken_by_another_type_is_refused():
    words = Words()
    words.add_actions({"move": Move})
    with pytest.raises(ValueError, match="action type 'move' is already Move"):
        words.declare(Vocabulary("waving", actions={"move": Wave}))


def test_a_family_registered_after_the_first_search_is_still_found():
    """Finders run again on a miss: a family added late declares its words when looked up."""
    words, registered = Words(), []
    words.add_finder(
        lambda: [words.declare(v) for v in registered if v.family not in words._families]
    )
    assert words.vocabulary("waving") is None
    registered.append(Vocabulary("waving", actions={"wave": Wave}))
    assert words.action("wave") is Wave


def test_a_package_cannot_take_a_declared_familys_words(monkeypatch):
    """An entry point named like a family already declared is not even imported."""
    words, imported = Words(), []
    words.declare(Vocabulary("rescue"))
    points = [
        metadata.EntryPoint("rescue", "evil.family:FAMILY", "sortie.families"),
        metadata.EntryPoint("waving", "waving.family:FAMILY", "sortie.families"),
    ]
    monkeypatch.setattr(vocabulary, "installed_entry_points", lambda group: points)
    monkeypatch.setattr(metadata.EntryPoint, "load", lambda point: imported.append(point.name))
    words.families()
    assert imported == ["waving"]


def test_a_broken_plug_in_is_named_when_its_words_are_missing(monkeypatch):
    words = Words()
    point = metadata.EntryPoint("waving", "no_such_module:FAMILY", "sortie.families")
    monkeypatch.setattr(vocabulary, "installed_entry_points", lambda group: [point])
    with pytest.raises(ConfigError, match=r"failed to load: waving \(no_such_module:FAMILY\)"):
        words.action("wave")


def test_an_event_of_an_undeclared_enum_is_refused_when_written():
    """A record cannot be written with a kind it could not be read back with."""
    assert EventRecord(kind=EventKind.CONTACT).kind is EventKind.CONTACT
    with pytest.raises(ValueError, match="event kind 'beep'"):
        EventRecord(kind=Noise.BEEP)


def test_shared_steps_refuse_a_part_and_say_how_a_familys_steps_are_read():
    line = {"index": 1, "pose": [0, 0, 0, 0], "action": {"type": "move"}, "clock_sim": 0.2}
    line |= {"clock_latency": 0.2, "round": {"round": 1}}
    with pytest.raises(ValueError, match=r"step_model\(family\)"):
        StepRecord.model_validate(line)


def test_an_observation_part_under_another_familys_key_is_refused():
    from sortie.core.vocabulary import MessagePart, ObservationPart

    part = ObservationPart("house", MessagePart, lambda o: None, lambda shared, part: shared)
    words = Words()
    words.declare(Vocabulary("household", observation=part))
    with pytest.raises(ValueError, match="observation part 'house' is already the household"):
        words.declare(Vocabulary("cottage", observation=part))
