"""The typed run configuration: shared fields defined once, old forms read, headers as before."""

import json

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.pose import Pose
from sortie.core.records import TrajectoryHeader
from sortie.core.run_config import EpisodeConfig, PlayConfig, PluginRef, RunConfig


def _header(config: object) -> TrajectoryHeader:
    episode = EpisodeSpec(
        episode_id="t/0",
        family="rescue",
        level="L1",
        world=WorldSpec(builder="flexible_room", seed=4),
        start=Pose(0.0, 0.0, 0.0, 0.0),
    )
    return TrajectoryHeader.model_validate(
        {
            "episode": episode.model_dump(mode="json"),
            "config": config,
            "agent": {"name": "oracle"},
            "backend": {"name": "embedded"},
            "seed": 1,
            "code_version": "0",
        }
    )


def test_the_store_row_and_the_header_share_one_definition_of_their_common_fields():
    """RunConfig and EpisodeConfig both extend PlayConfig: clock, settings, run_seed, pose, once."""
    shared = set(PlayConfig.model_fields)
    assert shared == {"clock", "settings", "run_seed", "pose"}
    for model in (RunConfig, EpisodeConfig):
        assert issubclass(model, PlayConfig)
        for name in shared:
            field, base = model.model_fields[name], PlayConfig.model_fields[name]
            assert (field.annotation, field.default) == (base.annotation, base.default)


def test_a_runs_header_config_is_written_in_the_records_order():
    """The header's config keys stay clock, settings, run_seed, suite, repeat (byte for byte)."""
    config = EpisodeConfig(
        clock="sim", settings={"triggers": "assisted"}, run_seed=0, suite="s", repeat=1
    )
    assert config.model_dump_json() == (
        '{"clock":"sim","settings":{"triggers":"assisted"},"run_seed":0,"suite":"s","repeat":1}'
    )


def test_a_header_without_a_config_reads_with_defaults_and_writes_back_empty():
    """An imported record's header (config {}) reads as the defaults and is rewritten as {}."""
    header = _header({})
    assert (header.config.clock, header.config.settings, header.config.run_seed) == ("sim", None, 0)
    assert json.loads(header.model_dump_json())["config"] == {}


def test_an_old_header_config_reads_its_settings_under_their_old_keys():
    """A header from before settings were recorded keeps ``triggers`` as an extra field."""
    old = {"clock": "latency", "triggers": "native", "run_seed": 2, "suite": "s", "repeat": 1}
    config = _header(old).config
    assert (config.clock, config.run_seed, config.repeat) == ("latency", 2, 1)
    assert config.settings is None and config.model_extra == {"triggers": "native"}


def test_a_store_row_naming_the_run_seed_seed_reads_as_run_seed():
    """Rows written before the config was typed said ``seed``: it is migrated on read."""
    row = {
        "agent": {"name": "random", "args": {}},
        "backend": {"name": "embedded", "args": {"body": "walker"}},
        "clock": "sim",
        "family": "rescue",
        "settings": {"triggers": "assisted"},
        "seed": 7,
    }
    config = RunConfig.model_validate(row)
    assert config.run_seed == 7 and "seed" not in config.model_dump()
    assert config.agent == PluginRef(name="random") and config.record_frames is False
