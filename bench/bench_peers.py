"""Benchmark sortie beside its peers per step: ViZDoom and MiniWorld, same image sizes.

The speed issue's per-pixel target: at 640×480, RGB + depth + semantic, a step of sortie no
dearer than ViZDoom's in at least four ground worlds and at most 1.5× it in all; at 160×120
at most 2×. Every configuration below runs its fixed action sequence ``--steps`` steps long,
``--repeats`` times, the configurations interleaved (each repeat runs every one once, in a
rotated order), and each keeps its fastest repeat, in CPU time and in wall time apart:

- **ViZDoom** 1.3.2 (software renderer, ``window_visible=False``, no sound): a scenario that
  ships in its wheel (``--scenarios``, default ``my_way_home``: a maze of eight rooms and
  their corridors, the nearest to sortie's indoor worlds; ``basic`` is one bare room),
  RGB24 screen, depth and labels buffers on, ``make_action`` of one tic then ``get_state``
  (the game tic, the render and the copies into numpy). Random turns (``TURN_LEFT_RIGHT_DELTA``,
  ±30°) while moving forward, god mode so that no episode ends. ViZDoom runs its game in an
  engine process of its own, so its CPU time is this process's plus the engine's (each of its
  threads' ``/proc/PID/task/TID/schedstat``, nanoseconds; the engine waits idle between steps).
- **sortie**: the embedded backend's walker step with the three images (as
  ``bench/bench_sim.py`` measures it: the body's motion and collisions, then the camera), in
  every ground world (``--worlds``), random turns ±30° at 1 m/s. The backend rather than the
  renderer alone: ViZDoom's step includes its game tic, and an agent pays the whole step.
- **MiniWorld** 2.1.0 (``--miniworld``, default ``MiniWorld-FourRooms-v0``; ``none`` leaves it
  out): OpenGL through Mesa's llvmpipe on a headless EGL context, ``LP_NUM_THREADS=0`` (one
  thread) unless set; its step renders RGB, and ``render_depth`` renders again for depth. It
  has no semantic image, so its rows are RGB + depth only. Skipped, with the reason, when
  miniworld or EGL is missing.

The ratio columns are each row's CPU time over ViZDoom's in the first scenario at that size.
The title names the CPU, its widest vector extension and the Embree kernels (from
``bench_sim``). ViZDoom and MiniWorld are not dependencies of sortie: ``make bench-peers``
makes a venv of its own (``bench/.venv-peers``) with sortie from this tree and both pinned.

Run: ``make bench-peers`` or ``bench/.venv-peers/bin/python bench/bench_peers.py [--sizes
160x120,640x480] [--worlds ground] [--scenarios my_way_home] [--steps 200] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from bench_sim import ALL_THREE, GROUND, machine, start_pose
from rich.console import Console
from rich.table import Table

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import Move
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.sim import raster
from sortie.sim.camera import CameraSpec

Size = tuple[int, int]
VIZDOOM_VERSION = "1.3.2"
TARGETS = {(640, 480): (1.0, 4, 1.5), (160, 120): (None, 0, 2.0)}
"""The issue's targets per size: (ratio to meet, in how many worlds at least, ratio never to
pass in any world)."""


class Runner(Protocol):
    """One configuration: a simulator, a world or scenario, an image size."""

    def prepare(self) -> None:
        """Put the simulator at its start, untimed, before each repeat."""

    def run(self) -> None:
        """Step the fixed action sequence once."""

    def outside_cpu(self) -> float:
        """Return the CPU seconds so far of the processes this one waits on (0 if none)."""


def parse_sizes(text: str) -> list[Size]:
    """Return the image sizes of ``--sizes`` ("160x120,640x480")."""
    sizes = []
    for item in filter(None, text.split(",")):
        width, _, height = item.lower().partition("x")
        if not (width.isdigit() and height.isdigit()):
            raise SystemExit(f"--sizes: {item!r} is not WIDTHxHEIGHT, e.g. 640x480")
        sizes.append((int(width), int(height)))
    return sizes


def ratio(cost: float, reference: float) -> float:
    """Return ``cost`` over ``reference``, NaN when either is missing or the reference is 0."""
    if not (math.isfinite(cost) and math.isfinite(reference)) or reference <= 0:
        return float("nan")
    return cost / reference


def verdict(size: Size, ratios: Sequence[float]) -> str:
    """Return how the worlds' ratios to ViZDoom at ``size`` stand against the issue's target."""
    if size not in TARGETS or not ratios:
        return ""
    meet, at_least, never = TARGETS[size]
    worst = max(ratios)
    line = f"{size[0]}×{size[1]}: worst {worst:.2f}× (target ≤ {never:g}×"
    if meet is not None:
        within = sum(value <= meet for value in ratios)
        line += f"; ≤ {meet:g}× in {within} of {len(ratios)} worlds, target ≥ {at_least}"
    met = worst <= never and (meet is None or sum(v <= meet for v in ratios) >= at_least)
    return f"{line}): {'met' if met else 'not met'}"


@dataclass
class Best:
    """A configuration's fastest repeat, CPU and wall seconds apart."""

    cpu: float = math.inf
    wall: float = math.inf

    def add(self, cpu: float, wall: float) -> None:
        """Keep the smaller of each."""
        self.cpu, self.wall = min(self.cpu, cpu), min(self.wall, wall)


def measure(runners: dict[str, Runner], repeats: int) -> dict[str, Best]:
    """Return each runner's fastest repeat, the runners interleaved in a rotated order."""
    best = {key: Best() for key in runners}
    keys = list(runners)
    for repeat in range(repeats):
        shift = repeat % len(keys)
        for key in keys[shift:] + keys[:shift]:
            runner = runners[key]
            runner.prepare()
            outside = runner.outside_cpu()
            ticked, started = time.perf_counter(), time.process_time()
            runner.run()
            cpu = time.process_time() - started
            wall = time.perf_counter() - ticked
            best[key].add(cpu + runner.outside_cpu() - outside, wall)
    return best


class SortieRunner:
    """The embedded backend's walker, RGB + depth + semantic, random turns at 1 m/s."""

    def __init__(self, world: str, size: Size, steps: int) -> None:
        camera = CameraSpec(size[0], size[1], 90.0)
        self.backend = EmbeddedBackend(body="walker", sensors=ALL_THREE, camera=camera)
        spec = WorldSpec(builder=world, seed=0, params={})
        self.spec = EpisodeSpec(
            episode_id="bench", family="bench", world=spec, start=start_pose(world, {})
        )
        turns = np.random.default_rng(0).uniform(-30, 30, steps)
        self.actions = [Move(float(turn), 1.0) for turn in turns]

    def prepare(self) -> None:
        """Reset the episode: the same start pose each repeat."""
        self.backend.reset(self.spec, 0)

    def run(self) -> None:
        """Step every action."""
        for action in self.actions:
            self.backend.step(action)

    def outside_cpu(self) -> float:
        """Return 0: the backend runs in this process."""
        return 0.0


def child_pids() -> set[int]:
    """Return the ids of this process's children (from ``/proc/*/stat``)."""
    pids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == os.getpid():
            pids.add(int(stat.parent.name))
    return pids


def process_cpu(pid: int) -> float:
    """Return the CPU seconds of every thread of process ``pid`` (``schedstat``, in ns)."""
    tasks = list(Path(f"/proc/{pid}/task").glob("*/schedstat"))
    if not tasks:
        raise SystemExit(f"bench_peers: /proc/{pid}/task/*/schedstat missing; ViZDoom's engine CPU")
    return sum(int(task.read_text().split()[0]) for task in tasks) / 1e9


@dataclass
class DoomRunner:
    """ViZDoom: a shipped scenario, screen (RGB24), depth and labels, one tic a step."""

    vzd: Any
    scenario: str
    size: Size
    steps: int
    game: Any = field(init=False)
    engine: int = field(init=False)
    actions: list[list[float]] = field(init=False)

    def __post_init__(self) -> None:
        vzd = self.vzd
        resolution = getattr(vzd.ScreenResolution, f"RES_{self.size[0]}X{self.size[1]}", None)
        if resolution is None:
            raise SystemExit(f"--sizes: ViZDoom has no resolution {self.size[0]}x{self.size[1]}")
        config = Path(vzd.scenarios_path) / f"{self.scenario}.cfg"
        if not config.exists():
            shipped = sorted(path.stem for path in Path(vzd.scenarios_path).glob("*.cfg"))
            raise SystemExit(f"--scenarios: no {config.name} in vizdoom; shipped: {shipped}")
        game = vzd.DoomGame()
        game.load_config(str(config))
        # Its settings file, which it writes on closing, away from the working directory.
        game.set_doom_config_path(str(Path(tempfile.gettempdir()) / "bench_peers_vizdoom.ini"))
        game.set_screen_resolution(resolution)
        game.set_screen_format(vzd.ScreenFormat.RGB24)
        game.set_depth_buffer_enabled(True)
        game.set_labels_buffer_enabled(True)
        game.set_window_visible(False)
        game.set_sound_enabled(False)
        game.set_mode(vzd.Mode.PLAYER)
        game.set_available_buttons([vzd.Button.TURN_LEFT_RIGHT_DELTA, vzd.Button.MOVE_FORWARD])
        game.set_episode_timeout(1_000_000)
        game.add_game_args("+sv_cheats 1")  # for god mode: no monster ends an episode
        before = child_pids()
        game.init()
        engines = child_pids() - before
        if len(engines) != 1:
            raise SystemExit(f"bench_peers: expected ViZDoom's one engine process, found {engines}")
        self.game, self.engine = game, engines.pop()
        turns = np.random.default_rng(0).uniform(-30, 30, self.steps)
        self.actions = [[float(turn), 1.0] for turn in turns]

    def prepare(self) -> None:
        """Start a new episode of the same seed, in god mode (one untimed tic applies it)."""
        self.game.set_seed(0)
        self.game.new_episode()
        self.game.send_game_command("god")
        self.game.make_action([0.0, 0.0], 1)

    def run(self) -> None:
        """Step every action: one tic, then the state with its three buffers and labels."""
        for k, action in enumerate(self.actions):
            self.game.make_action(action, 1)
            state = self.game.get_state()
            if state is None:
                raise SystemExit(f"ViZDoom {self.scenario}: the episode ended at step {k}")
            _ = (state.screen_buffer, state.depth_buffer, state.labels_buffer, state.labels)

    def outside_cpu(self) -> float:
        """Return the engine process's CPU seconds."""
        return process_cpu(self.engine)


class MiniWorldRunner:
    """MiniWorld: its step (RGB), then ``render_depth`` (a second render) for depth."""

    def __init__(self, env_id: str, size: Size, steps: int) -> None:
        import gymnasium

        with contextlib.redirect_stdout(io.StringIO()):  # its multisampling fallback's notes
            env = gymnasium.make(env_id, obs_width=size[0], obs_height=size[1])
        self.env = env.unwrapped  # no wrappers: stepping on past the goal or the step limit
        self.env.max_episode_steps = 10**9
        # Actions 0, 1, 2: turn left, turn right, move forward; turns as often as moves.
        self.actions = [int(a) for a in np.random.default_rng(0).integers(0, 3, steps)]

    def prepare(self) -> None:
        """Reset to the same seed."""
        self.env.reset(seed=0)

    def run(self) -> None:
        """Step every action, each followed by its depth image."""
        for action in self.actions:
            self.env.step(action)
            self.env.render_depth()

    def outside_cpu(self) -> float:
        """Return 0: llvmpipe renders in this process."""
        return 0.0


def load_vizdoom() -> Any:
    """Return the vizdoom module, or stop with how to get it."""
    try:
        import vizdoom
    except ImportError:
        sys.exit(
            "bench_peers needs vizdoom, which is not a dependency of sortie: run `make "
            "bench-peers` (a venv of its own, bench/.venv-peers, with sortie and "
            f"vizdoom=={VIZDOOM_VERSION})"
        )
    if vizdoom.__version__ != VIZDOOM_VERSION:
        print(f"note: vizdoom {vizdoom.__version__}, the figures were made with {VIZDOOM_VERSION}")
    return vizdoom


def miniworld_factory(env_id: str) -> tuple[Callable[[Size, int], Runner] | None, str]:
    """Return a MiniWorld runner maker, or None and why it is left out."""
    if env_id == "none":
        return None, "MiniWorld: left out (--miniworld none)"
    os.environ.setdefault("LP_NUM_THREADS", "0")
    try:
        import gymnasium
        import pyglet

        pyglet.options["headless"] = True  # an EGL context: no display needed
        import miniworld  # noqa: F401  (registers the MiniWorld-* environments)
    except ImportError as error:
        return None, f"MiniWorld: left out, not installed ({error}); `make bench-peers` has it"
    try:
        MiniWorldRunner(env_id, (16, 16), 1).env.close()
    except gymnasium.error.Error as error:
        raise SystemExit(f"--miniworld {env_id}: {error}") from error
    except Exception as error:  # no EGL or no Mesa: an optional peer missing is a note
        return None, f"MiniWorld: left out ({type(error).__name__}: {error})"
    threads = os.environ["LP_NUM_THREADS"]
    return (
        lambda size, steps: MiniWorldRunner(env_id, size, steps),
        f"MiniWorld {env_id}: RGB + depth (it has no semantic image), llvmpipe, "
        f"LP_NUM_THREADS={threads}",
    )


def cell(best: Best | None, steps: int) -> str:
    """Return "µs CPU (µs wall)" a step, or a dash."""
    if best is None:
        return "–"
    return f"{1e6 * best.cpu / steps:,.0f} ({1e6 * best.wall / steps:,.0f})"


def times(value: float) -> str:
    """Return a ratio as "1.23×", or a dash when it is missing."""
    return f"{value:.2f}×" if math.isfinite(value) else "–"


def main() -> None:
    """Build every configuration, measure them interleaved and print one table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="160x120,640x480")
    parser.add_argument("--worlds", default="ground", help="'ground' or names, comma-separated")
    parser.add_argument("--scenarios", default="my_way_home", help="ViZDoom's, comma-separated")
    parser.add_argument("--miniworld", default="MiniWorld-FourRooms-v0", help="or 'none'")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    vzd = load_vizdoom()
    sizes = parse_sizes(args.sizes)
    worlds = list(GROUND) if args.worlds == "ground" else list(filter(None, args.worlds.split(",")))
    scenarios = list(filter(None, args.scenarios.split(",")))
    make_miniworld, miniworld_note = miniworld_factory(args.miniworld)
    load = os.getloadavg()
    runners: dict[str, Runner] = {}
    for size in sizes:
        for scenario in scenarios:
            runners[f"ViZDoom|{scenario}|{size}"] = DoomRunner(vzd, scenario, size, args.steps)
        if make_miniworld is not None:
            runners[f"MiniWorld|{args.miniworld}|{size}"] = make_miniworld(size, args.steps)
        for world in worlds:
            runners[f"sortie|{world}|{size}"] = SortieRunner(world, size, args.steps)
    best = measure(runners, args.repeats)
    print_table(args, sizes, best, runners, load, miniworld_note)


def print_table(
    args: argparse.Namespace,
    sizes: list[Size],
    best: dict[str, Best],
    runners: dict[str, Runner],
    load: tuple[float, float, float],
    miniworld_note: str,
) -> None:
    """Print the table: µs a step per size and the ratio to ViZDoom's first scenario."""
    reference = args.scenarios.split(",")[0]
    camera = "rasterised" if raster.available() else "cast ray by ray"
    table = Table(
        title=f"Per step beside ViZDoom {VIZDOOM_VERSION}: µs CPU (wall), fastest of "
        f"{args.repeats} interleaved repeats of {args.steps} steps; ratio: CPU over ViZDoom "
        f"{reference}; sortie: walker, RGB + depth + semantic, frames {camera}\n{machine()}"
    )
    table.add_column("simulator")
    table.add_column("world")
    for width, height in sizes:
        table.add_column(f"{width}×{height} µs", justify="right")
        table.add_column("× ViZDoom", justify="right")
    rows = dict.fromkeys(key.rsplit("|", 1)[0] for key in runners)
    ratios: dict[Size, list[float]] = {size: [] for size in sizes}
    for row in rows:
        simulator, name = row.split("|")
        cells = []
        for size in sizes:
            found = best.get(f"{row}|{size}")
            base = best.get(f"ViZDoom|{reference}|{size}")
            value = ratio(found.cpu, base.cpu) if found and base else float("nan")
            if simulator == "sortie":
                ratios[size].append(value)
            cells += [cell(found, args.steps), times(value)]
        table.add_row(simulator, name, *cells)
    Console(width=200).print(table)
    now = os.getloadavg()
    print(f"load average before {load[0]:.2f}, after {now[0]:.2f} (1 min)")
    print(miniworld_note)
    for size in sizes:
        line = verdict(size, [value for value in ratios[size] if math.isfinite(value)])
        if line:
            print(line)


if __name__ == "__main__":
    main()
