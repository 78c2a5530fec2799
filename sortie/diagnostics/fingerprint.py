"""A fingerprint of what sortie computes, to compare across CPUs: episodes, records and scores.

Embree and numpy pick their kernels for the CPU at run time, so the same code can compute other
last bits on another machine; sortie's promise is that nothing it stores or scores changes
(docs/simulator.md, Same numbers on every machine). This module hashes a fixed sample of that:

- ``episode/<suite>/<n>``: episodes of every committed suite, regenerated alone;
- ``record/<suite>/<agent>[@<camera>]/<episode>``: trajectory records of fixed runs, less what
  the wall clock decides (timings, the latency clock); one run sees through a seed's camera;
- ``metrics/<suite>/<agent>/<episode>``: each of those episodes' outcome and metric values.

``python -m sortie.diagnostics.fingerprint`` prints the hashes as JSON, with the kernels that
made them. The tests run it under several Embree ISAs (``SORTIE_EMBREE_ISA``) and numpy
dispatch levels (``NPY_DISABLE_CPU_FEATURES``), with camera frames rasterised and cast
(``SORTIE_RASTER``) and graphs built with and without the compiled loops (``SORTIE_GRID``),
and require the same hashes, and the same as the ones committed in
``tests/data/fingerprint.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sortie.core.records_io import write_suite
from sortie.generation.suites import SUITES, episode_of
from sortie.metrics.rescue import WALL_CLOCK_METRICS
from sortie.missions.loading import load_suite
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store

EPISODES_PER_SUITE = (0, 1)
"""Which episodes of each committed suite are regenerated (by position in the file)."""
RUNS: tuple[tuple[str, str, int, str | None], ...] = (
    ("rescue-smoke-v2", "oracle", 4, None),
    ("rescue-smoke-v2", "explorer", 2, None),
    ("rescue-smoke-v2", "explorer", 1, "uni-navid"),
    ("aerial-smoke-v1", "oracle", 4, None),
    ("household-smoke-v1", "oracle", 3, None),
    ("household-smoke-v1", "random", 2, None),
)
"""(suite, agent, first n episodes, camera) run with run seed 0: oracles, and agents that
look, with the family's camera (None) and with one of the seeds' (``--camera``)."""
WALL_CLOCK = ("timings", "clock_latency")
"""Record fields the wall clock decides; left out of the hashes (and ``WALL_CLOCK_METRICS``)."""


def fingerprint() -> dict[str, str]:
    """Return the sample's hashes, by item (see the module docstring)."""
    hashes = dict(_episodes())
    with tempfile.TemporaryDirectory() as folder:
        for suite, agent, count, camera in RUNS:
            hashes.update(_run(Path(folder), suite, agent, count, camera))
    return dict(sorted(hashes.items()))


def _episodes() -> Iterator[tuple[str, str]]:
    for name, plan in SUITES.items():
        jobs = plan.jobs()
        for n in EPISODES_PER_SUITE:
            block, index, episode_id = jobs[n]
            spec = episode_of(plan, block, index, episode_id)
            yield f"episode/{name}/{n}", _digest(spec.model_dump_json())


def _run(
    folder: Path, suite: str, agent: str, count: int, camera: str | None
) -> Iterator[tuple[str, str]]:
    loaded = load_suite(suite)
    name = f"{agent}@{camera}" if camera else agent
    path = folder / f"{suite}-{name}.jsonl"
    write_suite(path, loaded.header, loaded.episodes[:count])
    run_id = f"{suite}-{name}".replace("@", "-")
    request = RunRequest(
        (str(path),), agent, store=folder / "store.db", run_id=run_id, camera=camera
    )
    with Store(request.store) as store:
        plan = plan_run(request, store)
        execute(plan, request, store)
        episodes = store.episodes(plan.run_id)
    for stored in sorted(episodes, key=lambda e: e.key):
        where = f"{suite}/{name}/{stored.episode_id}"
        lines = stored.record.read_text().splitlines()
        yield f"record/{where}", _digest("\n".join(_without_wall_clock(line) for line in lines))
        metrics = {
            name: "nan" if math.isnan(value) else value
            for name, value in sorted(stored.metrics.items())
            if name not in WALL_CLOCK_METRICS
        }
        scored = [stored.outcome, stored.failure_reason, metrics]
        yield f"metrics/{where}", _digest(json.dumps(scored, sort_keys=True))


def _without_wall_clock(line: str) -> str:
    record = json.loads(line)
    for name in WALL_CLOCK:
        record.pop(name, None)
    for stage in record.get("stages", []) if record.get("kind") == "footer" else []:
        stage.pop("clock_latency", None)
    return json.dumps(record, sort_keys=True)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def kernels() -> dict[str, object]:
    """Return the kernels this process runs.

    Embree's ISA and rays per call, whether camera frames are rasterised and graph builds run
    their compiled loops, numpy's levels.
    """
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    from sortie.sim import packets, raster
    from sortie.sim.navigation import kernels as graph_kernels

    module = packets.extension()
    return {
        "embree": os.environ.get(packets.ENV_ISA) or "best",
        "packets": module is not None,
        "packet_width": module.packet_width() if module is not None else 1,
        "raster": raster.available(),
        "raster_simd": raster.simd(),
        "graph_loops": graph_kernels.extension() is not None,
        "numpy": [name for name in __cpu_dispatch__ if __cpu_features__.get(name)],
    }


def main(argv: list[str] | None = None) -> int:
    """Print the fingerprint as JSON (or write it to ``--out``), with the kernels that made it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the JSON here instead of printing it")
    args = parser.parse_args(argv)
    text = json.dumps({"kernels": kernels(), "hashes": fingerprint()}, indent=1) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
