"""``sortie play``: a person plays a suite's episodes in a browser; the run is stored as any.

The run is an ordinary stored run of agent ``human`` on the latency clock (a person's
decision time costs mission time), one episode at a time in this process; the page shows
what the desk holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sortie.backends.catalog import build_from_ref
from sortie.remote.human import Desk, HumanAgent
from sortie.remote.page import PageServer
from sortie.run.batch import RunRequest, plan_run
from sortie.run.episode import JsonlRecorder, run_episode
from sortie.run.jobs import Job, JobResult, header_of, run_runtime, score_record
from sortie.run.store import Store


@dataclass(frozen=True, slots=True)
class PlayRequest:
    """What ``sortie play`` was asked."""

    suite: str
    episodes: tuple[str, ...] = ()
    port: int = 8766
    store: Path = Path("runs/sortie.db")
    run_id: str | None = None


def play(
    request: PlayRequest,
    echo: Callable[[str], None],
    ready: Callable[[str], None] | None = None,
    desk: Desk | None = None,
) -> list[JobResult]:
    """Serve the page, play the chosen episodes as run ``human-...``; return their results.

    ``ready`` is called with the page's address once it is served (``echo`` by default);
    ``desk`` is where the page and the episodes meet (a new one by default).

    Raises:
        ConfigError: a bad suite, episode id or run id (before the page is served).
    """
    run = RunRequest(
        (request.suite,),
        "human",
        store=request.store,
        run_id=request.run_id or f"human-{time.strftime('%Y%m%d-%H%M%S')}",
        clock="latency",
        episodes=request.episodes,
    )
    desk = desk or Desk()
    with Store(request.store) as store:
        plan = plan_run(run, store)
        page = PageServer(desk, "127.0.0.1", request.port).start()
        echo(f"Run {plan.run_id}: {len(plan.todo)} of {len(plan.jobs)} episode(s) to play")
        (ready or echo)(page.url)
        try:
            results = [_played(job, desk, store, plan.run_id, echo) for job in plan.todo]
            desk.finish(f"all {len(plan.jobs)} episode(s) played; run {plan.run_id} is stored")
            time.sleep(0.3)  # let the page show the last state before the server goes
        finally:
            page.stop()
    return results


def _played(
    job: Job, desk: Desk, store: Store, run_id: str, echo: Callable[[str], None]
) -> JobResult:
    result = play_job(job, desk)
    store.add(run_id, result)
    echo(f"{job.episode.episode_id}: {result.footer.outcome} after {result.footer.steps} steps")
    return result


def play_job(job: Job, desk: Desk) -> JobResult:
    """Run one job with the person at ``desk``, write its record and score it."""
    started = time.perf_counter()
    backend = build_from_ref(job.run.backend_for(job.episode.family))
    runtime = run_runtime(job, backend)
    recorder = JsonlRecorder(job.record)
    run_episode(runtime, HumanAgent(desk), header_of(job), [recorder, desk])
    return score_record(job, time.perf_counter() - started, recorder.written)
