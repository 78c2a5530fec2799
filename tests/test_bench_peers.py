"""The peers benchmark's pure helpers (bench/bench_peers.py); vizdoom itself is never imported."""

import importlib
import math
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture
def peers(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "bench"))
    return importlib.import_module("bench_peers")


def test_sizes_are_parsed_from_width_by_height(peers: ModuleType) -> None:
    """`--sizes` gives (width, height) pairs in order."""
    assert peers.parse_sizes("160x120,640X480") == [(160, 120), (640, 480)]


def test_a_size_without_a_height_is_refused(peers: ModuleType) -> None:
    """A size that is not WIDTHxHEIGHT stops with its text named."""
    with pytest.raises(SystemExit, match="'640'"):
        peers.parse_sizes("640")


def test_a_ratio_without_a_reference_is_nan(peers: ModuleType) -> None:
    """A missing or zero reference gives NaN, not a division error."""
    assert peers.ratio(3.0, 2.0) == 1.5
    assert math.isnan(peers.ratio(3.0, 0.0))
    assert math.isnan(peers.ratio(3.0, math.inf))


def test_the_large_target_needs_four_worlds_within_one(peers: ModuleType) -> None:
    """At 640×480 three worlds at or under 1.0× are not enough, four are."""
    three = [0.9, 1.0, 0.8, 1.2, 1.4]
    assert peers.verdict((640, 480), three).endswith("not met")
    assert peers.verdict((640, 480), [*three, 0.7]).endswith(": met")


def test_the_large_target_fails_on_one_world_over_its_cap(peers: ModuleType) -> None:
    """At 640×480 one world over 1.5× fails the target however many are under 1.0×."""
    assert peers.verdict((640, 480), [0.5, 0.5, 0.5, 0.5, 1.6]).endswith("not met")


def test_the_small_target_is_twice_vizdoom(peers: ModuleType) -> None:
    """At 160×120 every world within 2× meets the target, one over it does not."""
    assert peers.verdict((160, 120), [1.9, 2.0]).endswith(": met")
    assert peers.verdict((160, 120), [1.9, 2.1]).endswith("not met")


def test_a_size_without_a_target_has_no_verdict(peers: ModuleType) -> None:
    """Sizes the issue sets no target for print no verdict line."""
    assert peers.verdict((320, 240), [1.0]) == ""
