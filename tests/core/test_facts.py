import pytest

from sortie.core.errors import ConfigError
from sortie.core.records import PluginRef, TrajectoryFooter, TrajectoryHeader
from sortie.core.trajectory import Trajectory
from sortie.missions.aerial.facts import AerialFacts, aerial_facts
from sortie.missions.rescue.facts import RescueFacts, rescue_facts
from sortie.testing.episodes import aerial_hop, room_rescue

OLD_RESCUE = {
    "picked_up": True,
    "dropped_in_zone": False,
    "final_to_casualty": 0.4,
    "final_to_stretcher": 9.0,
    "triggers": "assisted",
    "clock": "sim",
}
"""Footer facts as rescue records held them before the target points were recorded."""


def trajectory(spec, facts):
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="hand"),
        backend=PluginRef(name="none"),
        seed=7,
        code_version="t",
    )
    return Trajectory(header, [], TrajectoryFooter(outcome="failure", steps=0, facts=facts))


def test_a_record_from_before_the_target_points_reads_with_none():
    """Old rescue facts validate; the points they lack are None, the rest as written."""
    facts = rescue_facts(trajectory(room_rescue(), OLD_RESCUE))
    assert facts.picked_up and facts.final_to_stretcher == 9.0
    assert facts.casualty_point is None and facts.stretcher_point is None


def test_a_misspelt_key_is_an_error_naming_the_record_and_the_key():
    """'picked_upp' is refused, not read as a missing pick-up."""
    bad = {**OLD_RESCUE, "picked_upp": True}
    with pytest.raises(ConfigError) as info:
        rescue_facts(trajectory(room_rescue(), bad))
    message = str(info.value)
    assert "handmade/room-0" in message and "footer.facts.picked_upp" in message


def test_a_value_of_the_wrong_type_is_an_error_naming_the_field():
    """A step budget that is not a number fails on that field."""
    with pytest.raises(ConfigError, match=r"footer\.facts\.step_budget"):
        aerial_facts(trajectory(aerial_hop(), {"step_budget": "twenty"}))


def test_facts_of_a_job_that_never_ran_are_the_defaults():
    """A footer with no facts (its worker kept dying) reads as the model's defaults."""
    assert aerial_facts(trajectory(aerial_hop(), {})) == AerialFacts()
    assert rescue_facts(trajectory(room_rescue(), {})) == RescueFacts()


def test_the_family_picks_the_model_and_the_typed_reader_checks_it():
    """An aerial record gives AerialFacts; asking it for rescue facts is an error."""
    record = trajectory(aerial_hop(), {"step_budget": 20})
    assert isinstance(aerial_facts(record), AerialFacts)
    with pytest.raises(ConfigError, match="expected a rescue record"):
        rescue_facts(record)


def test_facts_round_trip_through_the_footers_plain_dict():
    """as_record() gives JSON types that validate back to the same facts."""
    facts = RescueFacts(picked_up=True, casualty_point=(1.0, 2.0, 0.0))
    assert facts.as_record()["casualty_point"] == [1.0, 2.0, 0.0]
    assert rescue_facts(trajectory(room_rescue(), facts.as_record())) == facts
