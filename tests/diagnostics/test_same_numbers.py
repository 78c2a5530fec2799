"""Same numbers on every machine: the fingerprint under other Embree ISAs and numpy dispatch."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sortie.sim import packets, raster
from sortie.sim.navigation import kernels as graph_kernels
from tests.conftest import SERIAL

pytestmark = SERIAL  # three fingerprint processes at once (tests/conftest.py)


COMMITTED = Path(__file__).resolve().parents[1] / "data" / "fingerprint.json"
UPDATE = "python -m sortie.diagnostics.fingerprint --out tests/data/fingerprint.json"


def _cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _numpy_levels() -> list[str]:
    """Return the dispatched numpy levels this CPU runs, lowest first (e.g. X86_V3, X86_V4)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


def configurations() -> dict[str, dict[str, str]]:
    """Return the kernel choices to compare: this CPU's best, then two lower ones of each kind.

    Embree: SSE4.2 runs on every x86-64 CPU sortie supports, AVX2 where the CPU has it.
    numpy: with its lowest dispatched level only (X86_V3: an AVX2 machine without AVX-512),
    or none when that is all this CPU has; then with none (the build's baseline). The lower
    rasterises one pixel at a time (no AVX2 pixel loops); the lowest casts every camera pixel's
    ray instead of rasterising the frame, and builds graphs with numpy alone.
    """
    levels = _numpy_levels()
    avx2 = "avx2" in _cpu_flags()
    return {
        "best": {},
        "lower": {
            packets.ENV_ISA: "avx2" if avx2 else "sse4.2",
            "NPY_DISABLE_CPU_FEATURES": " ".join(levels[1:] if len(levels) > 1 else levels),
            raster.SIMD_SWITCH: "0",
        },
        "lowest": {
            packets.ENV_ISA: "sse4.2",
            "NPY_DISABLE_CPU_FEATURES": " ".join(levels),
            raster.ENV_SWITCH: "0",
            graph_kernels.ENV_SWITCH: "0",
        },
    }


@pytest.fixture(scope="module")
def fingerprints(tmp_path_factory) -> dict[str, dict[str, str]]:
    """The fingerprint computed under each configuration, each in a process of its own."""
    if not packets.available():
        pytest.skip("the Embree ISA is chosen through the packet extension, which is not built")
    folder = tmp_path_factory.mktemp("fingerprints")
    started = {}
    for name, settings in configurations().items():
        env = {**os.environ, **settings, "SORTIE_CACHE": str(folder / f"cache-{name}")}
        out = folder / f"{name}.json"
        command = [sys.executable, "-m", "sortie.diagnostics.fingerprint", "--out", str(out)]
        started[name] = (subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True), out)
    results = {}
    for name, (process, out) in started.items():
        _, errors = process.communicate(timeout=1800)
        assert process.returncode == 0, f"fingerprint under {name}: {errors}"
        results[name] = json.loads(out.read_text())
    return results


def test_each_configuration_ran_other_kernels(fingerprints):
    """The settings took: each run names the Embree ISA it asked for and fewer numpy levels."""
    kernels = {name: found["kernels"] for name, found in fingerprints.items()}
    assert all(k["packets"] for k in kernels.values())
    assert kernels["best"]["embree"] == "best" and kernels["lowest"]["embree"] == "sse4.2"
    assert kernels["best"]["raster"] == raster.available() and not kernels["lowest"]["raster"]
    assert kernels["best"]["raster_simd"] == raster.simd() and not kernels["lower"]["raster_simd"]
    assert kernels["best"]["graph_loops"] == (graph_kernels.extension() is not None)
    assert not kernels["lowest"]["graph_loops"]
    if "avx2" in _cpu_flags():  # Embree's AVX2 kernels are 8 wide: sortie casts 8 rays a call
        assert kernels["lower"]["packet_width"] == 8
    if _numpy_levels():
        assert len(kernels["lower"]["numpy"]) < len(kernels["best"]["numpy"])
        assert kernels["lowest"]["numpy"] == []


def _differences(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))


def test_other_kernels_give_the_same_episodes_records_and_scores(fingerprints):
    """Other kernels change no hash.

    Embree's SSE4.2/AVX2 kernels, numpy's lower dispatch levels, and casting every camera
    pixel instead of rasterising.
    """
    best = fingerprints["best"]["hashes"]
    for name in ("lower", "lowest"):
        differ = _differences(best, fingerprints[name]["hashes"])
        assert differ == [], (name, configurations()[name])


def test_the_fingerprint_is_the_committed_one(fingerprints):
    """This machine computes the hashes the committed file holds (made on another machine)."""
    committed = json.loads(COMMITTED.read_text())["hashes"]
    differ = _differences(committed, fingerprints["best"]["hashes"])
    assert differ == [], f"{len(differ)} items differ; if the change is meant: {UPDATE}"
