"""A key plan for a play test: the oracle's actions, each rounded to the nearest key."""

from sortie.agents.oracle import OracleAgent
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import Interact, Move
from sortie.core.episode import EpisodeSpec
from sortie.missions.rescue.mission import RescueMission
from sortie.remote.keys import keys_for
from sortie.run.jobs import episode_seed

_INTERACT = {"grab": "g", "drop": "x", "open_door": "o"}


def key_for(action) -> str:
    """Return the walker key nearest the oracle's action."""
    if isinstance(action, Interact):
        return _INTERACT[action.kind.value]
    assert isinstance(action, Move)
    if abs(action.turn) >= 22.5:
        return "q" if action.turn > 0 else "e"
    if abs(action.turn) >= 7.5:
        return "ArrowLeft" if action.turn > 0 else "ArrowRight"
    return "ArrowUp" if action.speed >= 0 else "ArrowDown"


def key_plan(spec: EpisodeSpec, run_seed: int = 0) -> tuple[list[str], str]:
    """Return the keys that play ``spec`` as the rounded oracle does, and how that ends."""
    backend = EmbeddedBackend(body="walker", sensors=("rgb",))
    mission = RescueMission(backend, clock="latency")
    seed = episode_seed(run_seed, spec.episode_id, 0)
    observation = mission.reset(spec, seed)
    oracle = OracleAgent()
    oracle.attach(backend.oracle_view())
    oracle.reset(mission.brief, seed)
    bindings, keys = keys_for("rescue", mission.brief.limits), []
    while not mission.done:
        keys.append(key_for(oracle.act(observation)))
        observation, _ = mission.step(bindings[keys[-1]].make(1.0, None), 0.0)
    return keys, str(mission.outcome)
