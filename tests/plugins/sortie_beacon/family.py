"""The beacon family: walk towards a beacon and ping it from within reach before time runs out.

One stage, ``S1 ping``: it is done when a ping is heard. A ping answers with a signal of
``1 - distance / 10`` (at least 0); it is heard within ``reach`` metres (a setting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import Field, ValidationError

from sortie.backends.base import Backend, StepOutcome
from sortie.core.actions import Action, Move
from sortie.core.episode import EpisodeSpec, Name, Placement, Record, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import ActionLimits, Brief, Event, EventKind, MissionObservation
from sortie.core.pose import Pose
from sortie.core.records import StepRecord
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.core.trajectory import Trajectory
from sortie.metrics.aggregate import ERROR, errored_metrics, is_error
from sortie.missions.family import Family, FamilySettings
from sortie.missions.gym_base import MissionEnv, env_settings
from sortie.missions.runtime import Clock, MissionRuntime, camera_of
from sortie.missions.stages import Stage
from sortie_beacon.words import BeaconEvent, BeaconObservation, Ping, PingRecord

MAX_TURN, MAX_SPEED = 45.0, 1.5
METRICS = ("sr", "pings", "steps")


class BeaconData(Record):
    """The ``mission`` part of a beacon episode."""

    beacon: Name
    budget_s: float = Field(gt=0, le=600)


def beacon_data(spec: EpisodeSpec) -> BeaconData:
    """Return the validated mission data of ``spec``, or raise naming the episode."""
    try:
        return BeaconData.model_validate(spec.mission)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise ConfigError(f"episode {spec.episode_id}: mission.{where}: {first['msg']}") from None


class BeaconSettings(FamilySettings):
    """How near a ping must be to be heard."""

    reach: float = Field(1.5, gt=0, le=10, description="metres within which a ping is heard")


class BeaconMission(MissionRuntime):
    """Walk, and ping: a ping heard within reach finishes the mission."""

    family = "beacon"

    def __init__(
        self,
        backend: Backend,
        clock: Clock | str = Clock.SIM,
        settings: BeaconSettings | None = None,
    ) -> None:
        """Create the rules over ``backend`` (any walker); no settings: the model's defaults."""
        super().__init__(backend, clock)
        self.settings = settings or BeaconSettings()
        self.reach = self.settings.reach

    def _setup(self, spec: EpisodeSpec) -> tuple[list[Stage], Brief]:
        self.data = beacon_data(spec)
        self.heard, self.signal, self.ping = False, 0.0, None
        text = f"Find the {self.data.beacon} and ping it."
        stage = Stage("S1", "ping", text, self.data.beacon, lambda: self.heard)
        brief = Brief(
            self.family,
            spec.level,
            text,
            stages=(("S1", text),),
            control_period=self.control_period,
            budget_s=self.data.budget_s,
            limits=ActionLimits(max_turn=MAX_TURN, max_speed=MAX_SPEED),
            camera=camera_of(self.backend),
        )
        return [stage], brief

    def _act(self, action: Action) -> tuple[StepOutcome, list[Event]]:
        self.ping = None
        if isinstance(action, Ping):
            return self.backend.step(Move()), self._pinged()
        if isinstance(action, Move) and abs(action.turn) <= MAX_TURN and action.speed <= MAX_SPEED:
            return self.backend.step(action), []
        return self.backend.step(Move()), [Event(EventKind.INVALID_ACTION, None, repr(action))]

    def _pinged(self) -> list[Event]:
        distance = self.backend.distance_to(self.data.beacon)
        self.signal = max(0.0, 1.0 - distance / 10.0)
        heard = distance <= self.reach
        self.ping = PingRecord(signal=self.signal, heard=heard)
        self.heard = self.heard or heard
        return [Event(BeaconEvent.HEARD, self.data.beacon, f"{distance:.2f} m")] if heard else []

    def _observe(self, frames: Any, events: tuple[Event, ...]) -> BeaconObservation:
        shared = super()._observe(frames, events)
        return BeaconObservation(*_shared(shared), signal=self.signal)

    def _record(self, action: Action, *args: Any, **kwargs: Any) -> StepRecord:
        return super()._record(action, *args, **kwargs).model_copy(update={"part": self.ping})

    def _failure_reason(self) -> str:
        return "not_heard"

    def _facts(self) -> dict[str, Any]:
        return {"heard": self.heard}


def _shared(observation: MissionObservation) -> tuple[Any, ...]:
    o = observation
    return (o.frames, o.carrying, o.events, o.step, o.clock, o.time_left)


def score_beacon(trajectory: Trajectory) -> dict[str, float]:
    """Return SR (heard), the pings made and the steps; an errored episode is not scored."""
    footer = trajectory.footer
    if is_error(footer.outcome, footer.failure_reason):
        return errored_metrics(METRICS)
    columns = trajectory.columns
    names = list(columns.action_names)
    pings = int(np.sum(columns.action == names.index("ping"))) if "ping" in names else 0
    heard = float(footer.facts.get("heard", False))
    return {ERROR: 0.0, "sr": heard, "pings": pings, "steps": footer.steps}


class BeaconEnv(MissionEnv[BeaconMission]):
    """Beacon episodes as a gymnasium env: depth and the signal in; (turn, speed) or a ping out."""

    family = "beacon"
    max_depth = 20.0
    eye_height = 1.6

    def __init__(
        self, episodes: Sequence[EpisodeSpec] | None = None, reach: float | None = None
    ) -> None:
        """Create the env over ``episodes`` on the embedded simulator (``reach``: a setting)."""
        settings = env_settings(BeaconSettings, "beacon", reach=reach)
        rules = lambda backend: BeaconMission(backend, settings=settings)  # noqa: E731
        camera = {"width": 32, "height": 32}
        super().__init__(episodes, None, rules, "walker", camera, ("depth",), None, None)

    def _budget(self, episode: EpisodeSpec) -> float:
        return beacon_data(episode).budget_s

    def _own_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {"signal": spaces.Box(0.0, 1.0, (1,), np.float32)}

    def _own_observation(self, observation: MissionObservation) -> dict[str, Any]:
        signal = observation.signal if isinstance(observation, BeaconObservation) else 0.0
        return {"signal": np.array([signal], np.float32)}

    def _action_space(self) -> spaces.Dict:
        box = spaces.Box(
            np.array([-MAX_TURN, -MAX_SPEED], np.float32),
            np.array([MAX_TURN, MAX_SPEED], np.float32),
        )
        return spaces.Dict({"move": box, "ping": spaces.Discrete(2)})

    def _to_action(self, action: dict[str, Any]) -> Action:
        if int(action["ping"]):
            return Ping()
        turn, speed = (float(v) for v in action["move"])
        return Move(turn, speed)

    def _reward(self, before: Mapping[str, str], record: StepRecord) -> float:
        return float(self.mission.tracker.all_done)

    def _ran_out(self) -> bool:
        return self.mission.done and not self.mission.tracker.all_done


class PingWalker:
    """Walks straight ahead at 1 m/s and pings every fifth step; near the beacon, every other one.

    Its steps depend on the signal its observations carry: were the family's observation part
    lost (on the wire, say), it would ping less often near the beacon and take other steps.
    """

    name = "ping-walker"
    families = frozenset({"beacon"})
    sensors: frozenset[str] = frozenset()

    def reset(self, brief: Brief, seed: int) -> None:
        """Nothing to remember."""

    def act(self, observation: MissionObservation) -> Action:
        """Ping every fifth step, or every other one once a signal said the beacon is near."""
        near = isinstance(observation, BeaconObservation) and observation.signal >= 0.7
        every = 2 if near else 5
        return Ping() if observation.step % every == every - 1 else Move(0.0, 1.0)


def beacon_episode(episode_id: str, ahead: float, budget_s: float = 20.0) -> EpisodeSpec:
    """Return an episode in an empty room: the beacon ``ahead`` metres in front of the start."""
    return EpisodeSpec(
        episode_id=episode_id,
        family="beacon",
        level="near" if ahead < 5 else "far",
        world=WorldSpec(builder="flexible_room", seed=3, params={"size": 14, "clutter": 0.0}),
        start=Pose(-4.0, 0.0, 0.0, 0.0),
        placements=[
            Placement(asset="stretcher", name="beacon", pose=Pose(-4.0 + ahead, 0.0, 0.0, 90.0))
        ],
        targets={"goal": "beacon"},
        mission={"beacon": "beacon", "budget_s": budget_s},
    )


def generate_beacon_suite(request: Any, echo: Any) -> None:
    """Write ``count`` episodes, the beacon 2 to 9 m ahead (drawn from the seed)."""
    rng = np.random.default_rng(request.seed)
    aheads = rng.uniform(2.0, 9.0, request.count)
    episodes = [beacon_episode(f"beacon/{i}", round(float(a), 2)) for i, a in enumerate(aheads)]
    path = request.out or Path(f"beacon-seed{request.seed}.jsonl")
    write_suite(path, SuiteHeader(suite=path.stem), episodes)
    echo(f"Wrote {len(episodes)} beacon episodes to {path}")


BEACON = Family(
    name="beacon",
    runtime=f"{__name__}:BeaconMission",
    check=beacon_data,
    settings=BeaconSettings,
    scorer=f"{__name__}:score_beacon",
    columns=METRICS,
    metrics=f"{__name__}:METRICS",
    body="walker",
    needs_interaction=False,
    env=f"{__name__}:BeaconEnv",
    actions=(Move, Ping),
    generator=f"{__name__}:generate_beacon_suite",
)
"""The descriptor: its package's entry point names it."""
