"""The local executor: runs jobs in this process or on a pool of worker processes.

Results stream back to the caller's ``on_result`` in the main process, which is the only writer
of the store. A worker keeps one backend across its jobs. A worker process that dies breaks the
pool: it is replaced, and the jobs it held are retried; to blame the right job, jobs that were
in flight together are retried one at a time, and only a death while running alone counts
against a job's retries.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from sortie.backends import Backend
from sortie.backends.catalog import build_from_ref
from sortie.core.records import ERROR_REASONS, FailureReason
from sortie.run.fork_server import worker_context
from sortie.run.jobs import Job, JobResult, record_failure, run_job
from sortie.run.orphans import die_with_parent

OnResult = Callable[[JobResult], None]

Backends = dict[str, Backend]
"""Backends built so far, by name and arguments (body and sensors among them)."""
_BACKENDS: Backends = {}
"""A worker process's backends by name and arguments: built once, reused by every job."""


def run_jobs(
    jobs: Sequence[Job], on_result: OnResult, workers: int = 1, max_retries: int = 2
) -> None:
    """Run ``jobs``, calling ``on_result`` in this process as each one finishes.

    With ``workers`` 1 the jobs run here, in order; otherwise on a spawned process pool, in
    any order. Ctrl-C stops the pool and re-raises; results already handed over are kept.
    """
    if workers <= 1:
        _run_here(jobs, on_result)
    else:
        _PoolRun(jobs, on_result, workers, max_retries).run()


def _run_here(jobs: Sequence[Job], on_result: OnResult) -> None:
    """Run the jobs in order in this process, closing the backends afterwards."""
    backends: Backends = {}
    try:
        for job in jobs:
            on_result(run_job(job, backend_for(backends, job)))
    finally:
        for backend in backends.values():
            backend.close()


def backend_for(backends: Backends, job: Job) -> Backend:
    """Return the job's backend (its name and arguments) from ``backends``, building it once."""
    ref = job.run.backend_for(job.episode.family)
    key = json.dumps(ref.model_dump(), sort_keys=True, default=str)
    if key not in backends:
        backends[key] = build_from_ref(ref)
    return backends[key]


def work(job: Job) -> JobResult:
    """Run one job in a worker process, on the backend this worker keeps for its life."""
    return run_job(job, backend_for(_BACKENDS, job))


def _start_worker(main: int) -> None:
    """Prepare a worker: Ctrl-C is the main process's to handle, and orphans exit.

    The worker's parent is the fork server (or, spawned, the main process ``main``); the fork
    server exits when the main process does, so either way the worker goes with its parent.
    """
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    if os.getppid() != parent or not _alive(main):  # died before the lines above took effect
        os._exit(1)


def _alive(pid: int) -> bool:
    """Return whether process ``pid`` exists (a signal 0 checks without sending one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _exit_when_orphaned(parent: int) -> None:
    # The portable way out for orphans (macOS), and a second one on Linux.
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)


class _PoolRun:
    """One pass over the jobs on a process pool, replacing the pool when a worker dies."""

    def __init__(
        self, jobs: Sequence[Job], on_result: OnResult, workers: int, max_retries: int
    ) -> None:
        self.waiting = deque(jobs)
        self.suspects: deque[Job] = deque()
        self.running: dict[Future[JobResult], Job] = {}
        self.deaths: Counter[str] = Counter()
        self.on_result, self.workers, self.max_retries = on_result, workers, max_retries

    def run(self) -> None:
        """Run every job; on any exit path (Ctrl-C included) the pool is shut down."""
        pool = self._new_pool()
        try:
            while self.waiting or self.suspects or self.running:
                refused = not self._submit(pool)
                done, _ = wait(self.running, return_when=FIRST_COMPLETED)
                if self._collect(done, pool) or (refused and not self.running):
                    pool.shutdown(wait=True)
                    pool = self._new_pool()
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.workers,
            mp_context=worker_context(),
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )

    def _submit(self, pool: ProcessPoolExecutor) -> bool:
        """Fill free workers; a suspect job runs alone so a death can be pinned on it.

        Return False if the pool refused a job because it broke since the last look (a worker
        died while another job was finishing); the job waits for the next pool.
        """
        if self.suspects:
            return bool(self.running) or self._start(pool, self.suspects)
        while self.waiting and len(self.running) < self.workers:
            if not self._start(pool, self.waiting):
                return False
        return True

    def _start(self, pool: ProcessPoolExecutor, queue: deque[Job]) -> bool:
        job = queue.popleft()
        try:
            self.running[pool.submit(work, job)] = job
        except BrokenProcessPool:
            queue.appendleft(job)
            return False
        return True

    def _collect(self, done: set[Future[JobResult]], pool: ProcessPoolExecutor) -> bool:
        """Hand over finished results; return True if the pool broke.

        Free workers get their next jobs before the results are handed over, so none waits
        while the main process stores an episode. A job that raised (a bug, not a fault)
        stops the run, but only after every result that finished beside it is handed over.
        """
        if any(isinstance(f.exception(), BrokenProcessPool) for f in done):
            return self._collect_broken()
        finished = [(self.running.pop(f), f) for f in done]
        bug = next((f.exception() for _, f in finished if f.exception() is not None), None)
        results = [(job, f.result()) for job, f in finished if f.exception() is None]
        # An error may stop the run (--max-consecutive-errors): no job is started before it
        # is stored, only to be killed (its model calls perhaps paid).
        errors = any(r.footer.failure_reason in ERROR_REASONS for _, r in results)
        try:
            if bug is None and not errors:
                self._submit(pool)  # refused if the pool broke meanwhile: the next pass sees it
        finally:  # even on Ctrl-C, the finished episodes are handed over
            self._hand_over(results)
        if bug is not None:
            raise bug
        return False

    def _hand_over(self, results: list[tuple[Job, JobResult]]) -> None:
        """Give every result to ``on_result``; if one call raises, the rest still go, then it."""
        failure: BaseException | None = None
        for job, result in results:
            try:
                self.on_result(dataclasses.replace(result, attempts=self.deaths[job.key] + 1))
            except BaseException as error:  # noqa: BLE001 - re-raised below, once all are in
                failure = failure or error
        if failure is not None:
            raise failure

    def _collect_broken(self) -> bool:
        """Gather a broken pool's futures: hand over what finished, retry what was lost."""
        wait(self.running)  # the broken pool fails all its futures; gather every one
        lost = []
        for future, job in list(self.running.items()):
            del self.running[future]
            if isinstance(future.exception(), BrokenProcessPool):
                lost.append(job)
            else:  # other exceptions are bugs, not faults: they stop the run
                attempts = self.deaths[job.key] + 1
                self.on_result(dataclasses.replace(future.result(), attempts=attempts))
        if len(lost) == 1:
            self._died(lost[0])
        self.suspects.extend(sorted(lost, key=lambda j: j.key) if len(lost) > 1 else [])
        return True

    def _died(self, job: Job) -> None:
        """Count a death against ``job``: retry it, or record it as a backend error."""
        self.deaths[job.key] += 1
        if self.deaths[job.key] <= self.max_retries:
            self.suspects.append(job)
            return
        error = f"the worker process died {self.deaths[job.key]} times running this episode"
        reason = FailureReason.BACKEND_ERROR
        self.on_result(record_failure(job, reason, error, self.deaths[job.key]))


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: drop queued jobs and end the running ones (they will be rerun)."""
    pids = list(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)  # the public API cannot stop a task that has started
        except ProcessLookupError:
            pass
