"""Stored runs to export: household runs of the oracle and of homiebot, rescue and aerial runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.testing.model_server import ModelServer
from tests.models.conftest import FAST, SECRET

WRONG_FIRST = {
    "analysis": "the orange is right there",
    "subtask": {"action": "pick", "target": "orange_0", "place": None},
    "skill": "grasp",
}
"""A readable first answer that fails (the orange is far away): then homiebot re-plans."""


@dataclass(frozen=True)
class HouseholdRuns:
    """A store with run ``oracle`` and run ``homiebot`` of the first household smoke task."""

    store: Path
    oracle: Trajectory
    homiebot: Trajectory
    requests: list[dict[str, Any]]
    """Every request the scripted server was sent during the homiebot run."""


def cli(words: list[str], code: int = 0) -> str:
    """Run a sortie command; return its output, checking its exit code."""
    result = CliRunner().invoke(app, words, env={"COLUMNS": "200"})
    assert result.exit_code == code, result.output
    return result.output


def run(store: Path, suite: str, run_id: str, agent: str, *args: str) -> Trajectory:
    """Run the first episode of ``suite`` into ``store``; return its record."""
    out = store.parent / run_id
    cli(
        ["run", suite, "--run-id", run_id, "--agent", agent, "--limit", "1"]
        + ["--store", str(store), "--out", str(out), *args]
    )
    (path,) = out.rglob("*.jsonl")
    return read_trajectory(path)


def answers_of(oracle: Trajectory) -> list[str]:
    """Return the oracle's rounds as homiebot's JSON answers."""
    rounds = [s.part for s in oracle.steps if s.part is not None]
    return [
        json.dumps(
            {
                "analysis": f"round {r.round} as planned",
                "subtask": {"action": r.action, "target": r.target, "place": r.place},
                "skill": r.skill,
            }
        )
        for r in rounds
    ]


def homiebot_args(server: ModelServer, *more: str) -> list[str]:
    """Return the -a arguments that point homiebot at ``server``."""
    settings = {"base_url": server.base_url, "model": "test-vlm", **FAST}
    pairs = [f"{k}={v}" for k, v in settings.items()] + list(more)
    return [word for pair in pairs for word in ("-a", pair)]


@pytest.fixture(scope="session")
def household(tmp_path_factory) -> HouseholdRuns:
    """Oracle and homiebot (garbage, a failing subtask, then the oracle's plan) runs."""
    store = tmp_path_factory.mktemp("household") / "s.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SORTIE_MODEL_API_KEY", SECRET)
        oracle = run(store, "household-smoke-v1", "oracle", "oracle", "--skills", "perfect")
        queue = ["no idea", json.dumps(WRONG_FIRST), *answers_of(oracle)]
        with ModelServer(lambda messages: queue.pop(0), models=("test-vlm",)) as server:
            words = homiebot_args(server)
            homiebot = run(store, "household-smoke-v1", "homiebot", "homiebot", *words)
            requests = list(server.requests)
        with ModelServer(lambda messages: "no idea", models=("test-vlm",)) as server:
            run(store, "household-smoke-v1", "garbage", "homiebot", *homiebot_args(server))
    return HouseholdRuns(store, oracle, homiebot, requests)


@pytest.fixture(scope="session")
def rescue_store(tmp_path_factory) -> tuple[Path, Trajectory]:
    """A store with the oracle's first rescue smoke episode, its frames recorded."""
    store = tmp_path_factory.mktemp("rescue") / "s.db"
    return store, run(store, "rescue-smoke-v2", "oracle", "oracle", "--record-frames")


@dataclass(frozen=True)
class RescuePair:
    """A store with run ``pair``: the oracle's first two rescue smoke episodes, no frames kept."""

    store: Path
    records: dict[str, Trajectory]
    """The records by episode id."""


@pytest.fixture(scope="session")
def rescue_pair(tmp_path_factory) -> RescuePair:
    """Two episodes played without --record-frames: every image of an export is replayed."""
    store = tmp_path_factory.mktemp("pair") / "s.db"
    out = store.parent / "pair"
    cli(
        ["run", "rescue-smoke-v2", "--run-id", "pair", "--agent", "oracle", "--limit", "2"]
        + ["--store", str(store), "--out", str(out)]
    )
    records = [read_trajectory(path) for path in out.rglob("*.jsonl")]
    return RescuePair(store, {r.header.episode.episode_id: r for r in records})
