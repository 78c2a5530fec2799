"""Replaying a record builds its runtime from the settings it was played with, parsed once."""

from sortie.core.records import Outcome, PluginRef, TrajectoryFooter, TrajectoryHeader
from sortie.core.run_config import EpisodeConfig
from sortie.core.trajectory import Trajectory
from sortie.export.replay import _settings
from sortie.missions.rescue.settings import RescueSettings, Triggers
from sortie.testing.episodes import room_rescue
from tests.conftest import run_config


def _record(config: dict) -> Trajectory:
    header = TrajectoryHeader(
        episode=room_rescue("r/0"),
        config=EpisodeConfig.model_validate(config),
        agent=PluginRef(name="oracle"),
        backend=PluginRef(name="embedded"),
        seed=0,
        code_version="0",
    )
    return Trajectory(header, [], TrajectoryFooter(outcome=Outcome.SUCCESS, steps=0))


def test_a_record_replays_with_the_settings_its_header_holds():
    """The header's settings become the family's model, whatever the run's config says."""
    record = _record({"clock": "sim", "settings": {"triggers": "native"}, "run_seed": 0})
    settings = _settings(record, run_config(settings={"triggers": "assisted"}))
    assert settings == RescueSettings(triggers=Triggers.NATIVE)


def test_an_old_record_replays_with_the_settings_under_their_old_header_keys():
    """A header from before settings were recorded gives ``triggers`` at its top level."""
    record = _record({"clock": "sim", "triggers": "native", "run_seed": 0, "suite": "s"})
    assert _settings(record, run_config()) == RescueSettings(triggers=Triggers.NATIVE)


def test_an_old_record_without_them_takes_the_old_runs_config_then_the_defaults():
    """The run's old top-level keys come next; what neither says takes the model's default."""
    old_run = run_config(triggers="native")  # an old row's key, kept as an extra field
    assert _settings(_record({"run_seed": 0}), old_run).triggers is Triggers.NATIVE
    assert _settings(_record({"run_seed": 0}), run_config()) == RescueSettings()
