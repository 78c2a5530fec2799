"""The Ray executor: jobs run as Ray tasks; results stream back to this process, the one writer.

Install with ``pip install sortie[ray]``. Without an address a local Ray instance is started
with ``workers`` CPUs; with one, the run joins that cluster and keeps ``workers`` tasks in
flight. A task returns its trajectory record's text with its result and this process writes
the file, so a cluster needs no shared folder for records (recorded frames do need one).
Ray retries a task whose worker process died (``max_retries`` times); after that the episode
is recorded as a backend error, like on the local pool.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from sortie.core.columns import columns_file
from sortie.core.errors import ConfigError
from sortie.core.records import FailureReason
from sortie.core.records_io import write_atomic
from sortie.run.executor import OnResult, work
from sortie.run.jobs import Job, JobResult, record_failure

_CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's environment setting for multi-machine clusters (on by default on Linux)."""


def run_jobs_on_ray(
    jobs: Sequence[Job],
    on_result: OnResult,
    workers: int = 1,
    max_retries: int = 2,
    address: str | None = None,
) -> None:
    """Run ``jobs`` as Ray tasks, calling ``on_result`` here as each one finishes.

    Ctrl-C cancels the tasks still running and re-raises; results handed over are kept.
    """
    ray = _import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        _start(ray, address, workers)
    task = ray.remote(num_cpus=1, max_retries=max_retries)(_run_remote)
    pending: dict[Any, Job] = {}
    waiting = deque(jobs)
    try:
        while waiting or pending:
            while waiting and len(pending) < workers:
                job = waiting.popleft()
                pending[task.remote(job)] = job
            done, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(done[0])
            on_result(_collect(ray, done[0], job, max_retries))
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started_here:
            ray.shutdown()


def _start(ray: ModuleType, address: str | None, workers: int) -> None:
    options: dict[str, Any] = dict(
        include_dashboard=False, logging_level="ERROR", log_to_driver=False
    )
    if address:
        ray.init(address=address, **options)
        return
    # A local instance talks over loopback only, never over the machine's network address.
    with _loopback_only(ray):
        ray.init(
            num_cpus=workers, _node_ip_address="127.0.0.1", dashboard_host="127.0.0.1", **options
        )


@contextmanager
def _loopback_only(ray: ModuleType) -> Iterator[None]:
    """Make ``ray.init`` keep a local instance's addresses (and so its listeners) on loopback.

    On Linux Ray replaces a loopback ``_node_ip_address`` by the machine's network address
    unless it believes clusters are off (its macOS/Windows default), and its servers then
    listen on every interface. Clusters off, Ray's GCS, raylet, object manager, workers and
    this driver all bind 127.0.0.1. The switch is read at ``ray.init`` only (the processes it
    starts are handed the address), so it is restored afterwards.
    """
    from ray._private import ray_constants

    saved = ray_constants.ENABLE_RAY_CLUSTER, os.environ.get(_CLUSTER_SWITCH)
    ray_constants.ENABLE_RAY_CLUSTER = False
    os.environ[_CLUSTER_SWITCH] = "0"  # inherited by the processes Ray starts, for their imports
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved[0]
        if saved[1] is None:
            os.environ.pop(_CLUSTER_SWITCH, None)
        else:
            os.environ[_CLUSTER_SWITCH] = saved[1]


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray: pip install 'sortie[ray]'") from None
    return ray


def _run_remote(job: Job) -> tuple[JobResult, bytes, bytes | None]:
    """Run a job in a Ray worker, recording to a local temporary file.

    Returns the result, the record's bytes and its columns file's (None if there is none).
    """
    with tempfile.TemporaryDirectory(prefix="sortie-") as folder:
        local = dataclasses.replace(job, record=Path(folder) / job.record.name)
        result = work(local)
        record, columns = local.record, columns_file(local.record)
        kept = (record.read_bytes(), columns.read_bytes() if columns.exists() else None)
    return dataclasses.replace(result, job=job), *kept


def _collect(ray: ModuleType, ref: Any, job: Job, max_retries: int) -> JobResult:
    """Write the finished task's record; a task whose workers kept dying is a backend error."""
    lost = (
        ray.exceptions.WorkerCrashedError,
        ray.exceptions.NodeDiedError,
        ray.exceptions.OutOfMemoryError,
        ray.exceptions.ObjectLostError,
    )
    try:
        result, record, columns = ray.get(ref)
    except lost as error:
        message = f"the Ray worker was lost {max_retries + 1} times running this episode: {error}"
        return record_failure(job, FailureReason.BACKEND_ERROR, message, max_retries + 1)
    write_atomic(job.record, record)
    if columns is not None:
        write_atomic(columns_file(job.record), columns)
    return result
