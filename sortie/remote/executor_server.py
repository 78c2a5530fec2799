"""``sortie serve-executor``: EMMOE's planners drive sortie's household executor over a socket.

The run is an ordinary stored run of agent ``emmoe-planner``: each episode a planner plays to
its end is recorded, scored and added to the store as any run's (``sortie report`` shows
it). Planners are served one at a time, each for as many episodes as it plays in turn (EMMOE's
executor plays all of a planner's tasks over one connection); the next one connecting takes
over where it stopped. An episode a planner leaves unfinished, by closing, by falling silent
for ``timeout`` seconds or by a malformed message (answered with an error, then closed), is
neither recorded nor scored: it is played again, from its start, by the next planner.

By default sortie listens (``--port``) and planners connect; ``--connect HOST:PORT`` dials a
planner that listens instead, as EMMOE's own planners do (its executor connects to them).
Either way only loopback addresses are used unless ``allow_remote`` says otherwise: the
protocol has no token, so whoever reaches the port drives the robot and writes the views.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sortie.backends.catalog import build_from_ref
from sortie.core.episode import check_name
from sortie.core.errors import ConfigError
from sortie.remote.bounded import LOOPBACK
from sortie.remote.emmoe_link import (
    PORT,
    Connection,
    EmmoePlanner,
    PlannerGoneError,
    ProtocolError,
    encode,
    view_paths,
)
from sortie.run.batch import RunRequest, plan_run
from sortie.run.episode import JsonlRecorder, Observer, run_episode
from sortie.run.jobs import Job, JobResult, header_of, run_runtime, score_record
from sortie.run.store import Store

AGENT = "emmoe-planner"
DEEPEST_ROUND = 999
"""A round number at least as long as any episode's last (for the check of the views folder)."""
Echo = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ExecutorRequest:
    """What ``sortie serve-executor`` was asked."""

    suite: str
    episodes: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    """Address to listen on (or, with ``connect``, the planner's)."""
    port: int = PORT
    """Port to listen on (0: a free one), or the planner's port with ``connect``."""
    connect: bool = False
    """Dial a planner listening at host:port instead of listening."""
    allow_remote: bool = False
    """Allow a host that is not loopback."""
    views: Path | None = None
    """Folder for the views (None: ``emmoe-views`` beside the run's records)."""
    timeout: float = 300.0
    """Seconds a planner may take to send a message before it is dropped."""
    store: Path = Path("runs/sortie.db")
    run_id: str | None = None
    label: str = ""
    """What the planner is (its model), kept as the agent's argument."""
    repeats: int = 1
    seed: int = 0
    family_settings: Mapping[str, Any] = field(default_factory=dict)


def check_host(host: str, allow_remote: bool) -> None:
    """Refuse a host that is not loopback unless asked for.

    Raises:
        ConfigError: ``host`` is not 127.0.0.1, localhost or ::1, and ``allow_remote`` is off.
    """
    if host.strip("[]") not in LOOPBACK and not allow_remote:
        raise ConfigError(
            f"host {host!r} is not loopback ({', '.join(LOOPBACK)}): EMMOE's protocol has no "
            "token, so whoever reaches the port drives the robot; pass --allow-remote to mean it"
        )


def serve_executor(
    request: ExecutorRequest, echo: Echo, ready: Echo | None = None
) -> list[JobResult]:
    """Play the suite's episodes with planners over EMMOE's protocol; return their results.

    ``ready`` is called with the address once sortie listens (or has dialled the planner).

    Raises:
        ConfigError: a bad suite, episode id, setting, run id or host, or a views folder too
            deep for EMMOE's 1024-byte messages (all before any planner is served).
        OSError: the port cannot be listened on or the planner dialled.
    """
    check_host(request.host, request.allow_remote)
    run = RunRequest(
        (request.suite,),
        AGENT,
        agent_args={"label": request.label} if request.label else {},
        store=request.store,
        run_id=request.run_id or f"{AGENT}-{time.strftime('%Y%m%d-%H%M%S')}",
        episodes=request.episodes,
        repeats=request.repeats,
        seed=request.seed,
        family_settings=request.family_settings,
    )
    with Store(request.store) as store:
        plan = plan_run(run, store)
        views = request.views or plan.records / "emmoe-views"
        service = ExecutorService(store, plan.run_id, views, request.label, echo)
        todo = deque(plan.todo)
        try:
            service.check(plan.todo)
            echo(f"Run {plan.run_id}: {len(todo)} of {len(plan.jobs)} episode(s) to play")
            _seat(request, service, todo, ready or echo)
        finally:  # stopped or refused before any episode: no empty run is left behind
            store.drop_if_empty(plan.run_id)
        if todo:
            echo(f"{len(todo)} episode(s) left to play: --run-id {plan.run_id} resumes the run")
        return service.results


def _seat(
    request: ExecutorRequest, service: ExecutorService, todo: deque[Job], ready: Echo
) -> None:
    """Serve planners until every episode is played: the one dialled, or each that connects."""
    if not todo:
        return
    if request.connect:
        sock = socket.create_connection((request.host, request.port), request.timeout)
        ready(f"{request.host}:{request.port}")
        service.serve(Connection(sock, request.timeout), todo)
        return
    family = socket.AF_INET6 if ":" in request.host else socket.AF_INET
    with socket.create_server((request.host.strip("[]"), request.port), family=family) as server:
        host, port, *_ = server.getsockname()
        ready(f"{host}:{port}")
        while todo:
            sock, _ = server.accept()
            service.serve(Connection(sock, request.timeout), todo)


class ExecutorService:
    """The executor's end for planners in turn: plays episodes with each, keeps the results."""

    def __init__(self, store: Store, run_id: str, views: Path, label: str, echo: Echo) -> None:
        """Store results under ``run_id``, write views under ``views``."""
        self.store, self.run_id, self.views = store, run_id, views
        self.label, self.echo = label, echo
        self.results: list[JobResult] = []

    def check(self, jobs: list[Job]) -> None:
        """Refuse a views folder whose paths would not fit in EMMOE's messages.

        Raises:
            ConfigError: the deepest round's paths are longer than a message may be.
        """
        for job in jobs:
            paths = view_paths(self.folder(job).resolve(), DEEPEST_ROUND)
            encode([str(p) for p in paths])

    def folder(self, job: Job) -> Path:
        """Return a job's views folder: ``<views>/<episode id, / as __>/<repeat + 1>``."""
        parts = [check_name(part, "episode id part") for part in job.episode.episode_id.split("/")]
        return self.views / "__".join(parts) / str(job.repeat + 1)

    def serve(self, connection: Connection, todo: deque[Job]) -> None:
        """Play episodes with one planner until it leaves or none is left; then close."""
        self.echo(f"planner {connection.peer} connected")
        try:
            while todo:
                result = self.play(todo[0], connection)
                todo.popleft()
                self.store.add(self.run_id, result)
                self.results.append(result)
                footer, episode = result.footer, result.job.episode.episode_id
                self.echo(f"{episode}: {footer.outcome} after {footer.steps} rounds")
                connection.settle()
        except PlannerGoneError as gone:
            self.echo(f"planner {connection.peer} dropped: {gone}")
        except ProtocolError as error:
            self.echo(f"planner {connection.peer} refused: {error}")
            connection.refuse(str(error))
        finally:
            connection.close()

    def play(self, job: Job, connection: Connection) -> JobResult:
        """Run one job with the planner, write its record and score it."""
        started = time.perf_counter()
        planner = EmmoePlanner(self.label, connection)
        planner.folder = self.folder(job)
        backend = build_from_ref(job.run.backend_for(job.episode.family))
        recorder = JsonlRecorder(job.record)
        try:
            runtime = run_runtime(job, backend)
            observers: list[Observer] = [recorder, planner]
            run_episode(runtime, planner, header_of(job), observers)
        finally:
            backend.close()
        return score_record(job, time.perf_counter() - started, recorder.written)
