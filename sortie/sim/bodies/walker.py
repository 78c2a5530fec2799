"""The walker: an upright cylinder that follows the ground, climbs steps and slides along walls.

A step turns the body, then moves it horizontally. The move is checked by *probes*: one batch
of rays (one Embree call) that sweeps the body's leading edge along the whole remaining move
and samples the ground and the headroom every ``radius / 4`` metres along it. The walker keeps
the samples up to the first obstacle, refused ground or change of floor height, then probes
again from there, so a free step on flat ground costs one probe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import InvalidPoseError, ParameterError, SimulationError
from sortie.core.pose import Pose, wrap_degrees
from sortie.sim import packets
from sortie.sim.bodies.walker_rays import (
    CLEARANCE,
    PER_SAMPLE,
    ProbeBuffers,
    Template,
    clearance_rays,
    template,
)
from sortie.sim.linear import product
from sortie.sim.raycast import Hits, RayCaster
from sortie.sim.shapes import WALKER, WalkerShape

SKIN = 0.005
"""Gap (metres, along the move) kept from what the body touches, so that the next sweep starts
outside the geometry instead of on its surface."""
MAX_DROP = 1.0
"""Highest drop (metres) the walker steps down; higher edges are refused."""
FLAT = 1e-3
"""Height changes smaller than this (metres) are float noise, not a new floor height."""
REPROBE = 0.05
"""A floor height change above this (metres) makes the rest of a probe stale: probe again."""


class _Stop(Enum):
    """Why the walker stopped using a probe's samples."""

    DONE = "done"
    CLIMBED = "climbed"
    REFUSED = "refused"
    WALL = "wall"


@dataclass(frozen=True, slots=True)
class WalkResult:
    """What one walker step did.

    Attributes:
        pose: where the body is now (z: the feet's height).
        distance: horizontal path length travelled, metres.
        contacts: names of the objects touched, in order of first touch.
        blocked: whether geometry or the ground cut short or deflected the move.
    """

    pose: Pose
    distance: float
    contacts: tuple[str, ...] = ()
    blocked: bool = False


@dataclass(frozen=True, slots=True)
class _Probe:
    """What one probe found along a move."""

    free: float  # how far the body may move before touching an obstacle (inf: nothing)
    normal: tuple[float, float]  # horizontal unit normal of that obstacle, facing the body
    obstacle: int  # its instance id (0: none)
    ground: list[float]  # feet height at each sample; nan where the walker may not stand
    ceiling: list[int]  # instance id of what leaves too little headroom at each sample (0: none)


@dataclass(slots=True)
class _Stride:
    """The walker's progress during one step."""

    x: float
    y: float
    feet: float
    travelled: float = 0.0
    blocked: bool = False
    contacts: list[str] = field(default_factory=list)

    def advance(self, ux: float, uy: float, distance: float) -> None:
        """Move ``distance`` metres along the unit vector ``(ux, uy)``."""
        self.x += ux * distance
        self.y += uy * distance
        self.travelled += distance

    def touch(self, name: str) -> None:
        """Record a contact with object ``name`` (once per step)."""
        self.blocked = True
        if name and name not in self.contacts:
            self.contacts.append(name)


class Walker:
    """A walking body on a ray-cast scene; its pose's z is the height of its feet."""

    def __init__(
        self, caster: RayCaster, shape: WalkerShape = WALKER, max_drop: float = MAX_DROP
    ) -> None:
        """Create a walker; call ``place`` before ``step``.

        Args:
            caster: ray caster of the scene to walk in (it tracks doors' state).
            shape: the body's cylinder, step height and steepest slope.
            max_drop: highest drop the walker steps down, metres.
        """
        self.caster = caster
        self.shape = shape
        self.max_drop = max_drop
        self._names = ("",) + tuple(o.name for o in caster.scene.objects)
        self._cos_slope = math.cos(math.radians(shape.max_slope))
        self._base = shape.step + CLEARANCE  # height above the feet of the down and up rays
        self._spacing = shape.radius / 4
        self._pose: Pose | None = None
        self._frame = np.array([[0.0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
        module = packets.extension()
        self._rays = None if module is None else module.probe_rays
        """The compiled ray builder: the same products as ``product``, in one call."""
        self._read = None if module is None else module.probe_read
        """The compiled reader of a probe's hits: what ``_read_sweep`` and ``_read_ground`` find."""
        self._layouts: dict[int, tuple[Template, ProbeBuffers]] = {}

    def _layout(self, n: int) -> tuple[Template, ProbeBuffers]:
        """Return the probe layout with ``n`` samples and its scratch arrays (kept per ``n``)."""
        found = self._layouts.get(n)
        if found is None:
            shape = self.shape
            tpl = template(n, shape.radius, shape.height, self._base, self._base + self.max_drop)
            found = self._layouts[n] = (tpl, tpl.buffers())
        return found

    @property
    def pose(self) -> Pose:
        """Return the current pose; raise SimulationError before ``place``."""
        if self._pose is None:
            raise SimulationError("Walker: pose read before place() was called")
        return self._pose

    def place(self, pose: Pose) -> Pose:
        """Put the walker at ``pose`` with its feet on the ground and return the pose used.

        The feet snap to the walkable surface within one step height above or below ``pose.z``.

        Raises:
            InvalidPoseError: if the pose is outside the scene's bounds, has no walkable ground
                within a step of its feet, or the body would intersect geometry.
        """
        self._check_bounds(pose)
        feet = self._ground_at(pose)
        self._check_clear(pose, feet)
        self._pose = Pose(pose.x, pose.y, feet, wrap_degrees(pose.yaw))
        return self._pose

    def step(self, turn_deg: float, speed: float, dt: float) -> WalkResult:
        """Turn by ``turn_deg``, then walk ``speed * dt`` metres along the new heading.

        Negative speeds walk backwards. The move slides along what it touches, climbs rises up
        to the step height, steps down drops up to ``max_drop``, and stops before higher edges,
        missing ground or too little headroom.
        """
        if not (math.isfinite(turn_deg) and math.isfinite(speed) and math.isfinite(dt)) or dt < 0:
            raise ParameterError(
                f"Walker.step: expected finite turn and speed and dt >= 0, got "
                f"turn={turn_deg}, speed={speed}, dt={dt}"
            )
        pose = self.pose
        yaw = wrap_degrees(pose.yaw + turn_deg)
        stride = _Stride(pose.x, pose.y, pose.z)
        distance = speed * dt
        rad = math.radians(yaw)
        self._walk(stride, math.cos(rad) * distance, math.sin(rad) * distance)
        self._pose = Pose(stride.x, stride.y, stride.feet, yaw)
        return WalkResult(self._pose, stride.travelled, tuple(stride.contacts), stride.blocked)

    def _walk(self, stride: _Stride, vx: float, vy: float) -> None:
        """Move ``stride`` by ``(vx, vy)``, one probe at a time, sliding along obstacles."""
        # Each probe uses up at least one sample or deflects the move; a few spare probes let
        # the body slide along two walls of a corner before it gives up.
        for _ in range(4 + self._samples(math.hypot(vx, vy))):
            length = math.hypot(vx, vy)
            if length < 1e-6:
                return
            vx, vy = self._follow(stride, vx / length, vy / length, length)
        stride.blocked = True

    def _follow(self, stride: _Stride, ux: float, uy: float, length: float) -> tuple[float, float]:
        """Probe a move and follow it as far as allowed; return the move still to make."""
        n = self._samples(length)
        probe = self._probe(stride, ux, uy, length, n)
        kept, stop = _usable(probe, length / n, stride.feet)
        stride.advance(ux, uy, length * kept / n)
        if kept:
            # Rounded to micrometres (-0.0 made 0.0) so that float32 noise stays out of poses.
            stride.feet = round(probe.ground[kept - 1], 6) + 0.0
        rest = length * (n - kept) / n
        if stop is _Stop.DONE:
            return 0.0, 0.0
        if stop is _Stop.CLIMBED:
            return ux * rest, uy * rest
        if stop is _Stop.REFUSED:
            stride.touch(self._names[probe.ceiling[kept]])
            return 0.0, 0.0
        # The obstacle lies within the next sample: close the gap, keeping the last sample's
        # floor height, then slide the rest of the move along the obstacle's face.
        gap = min(max(probe.free - length * kept / n, 0.0), rest)
        stride.advance(ux, uy, gap)
        stride.touch(self._names[probe.obstacle])
        return _slide(ux * (rest - gap), uy * (rest - gap), probe.normal)

    def _samples(self, length: float) -> int:
        """Return how many ground samples a move of ``length`` metres needs."""
        # The margin keeps 0.3 / 0.075 = 4.000000000000001 at 4 samples.
        return max(1, math.ceil(length / self._spacing - 1e-9))

    def _probe(self, stride: _Stride, ux: float, uy: float, length: float, n: int) -> _Probe:
        """Cast one probe along the move ``length * (ux, uy)`` with ``n`` ground samples."""
        tpl, buf = self._layout(n)
        piece = length / n
        frame = self._frame
        frame[0, 0], frame[0, 1], frame[1, 0], frame[1, 1] = ux, uy, -uy, ux
        frame[3, 0], frame[3, 1] = ux * piece, uy * piece
        frame[4, 0], frame[4, 1], frame[4, 2] = stride.x, stride.y, stride.feet
        # Products in float64, then rounded once to float32: the rays of a plain cast.
        sweep = len(tpl.lead)
        if self._rays is not None:
            args = (tpl.origins, tpl.directions, frame, tpl.lead, length + SKIN)
            self._rays(*args, buf.origins, buf.directions, buf.tmax)
        else:
            np.copyto(buf.origins, product(tpl.origins, frame, out=buf.origins64))
            np.copyto(buf.directions, product(tpl.directions, frame[:3], out=buf.directions64))
            np.copyto(buf.tmax[:sweep], np.add(tpl.lead, length + SKIN, out=buf.sweep64))
        hits = self.caster.cast_prepared(buf.origins, buf.directions, buf.tmax, buf.hits)
        if self._read is not None:
            return self._read_compiled(hits, tpl.lead, ux, uy, stride.feet, n)
        normals = self.caster.table.normal[hits.triangle]
        free, normal, obstacle = self._read_sweep(hits, normals, tpl.lead, ux, uy)
        ground, ceiling = self._read_ground(hits, normals, sweep, stride.feet, n)
        return _Probe(free, normal, obstacle, ground, ceiling)

    def _read_compiled(
        self, hits: Hits, lead: NDArray[np.float64], ux: float, uy: float, feet: float, n: int
    ) -> _Probe:
        """Read a probe's hits in one call to the extension: what the two readers below find."""
        assert self._read is not None
        table = self.caster.table
        shape = (feet, self._base, self.shape.height, self._cos_slope, FLAT)
        args = (hits.t, hits.triangle, table.normal, table.object_id, lead, ux, uy, *shape)
        (t, nx, ny, obstacle), ground, ceiling = self._read(*args, n, PER_SAMPLE)
        if not math.isfinite(t):
            return _Probe(math.inf, (0.0, 0.0), 0, ground, ceiling)
        norm = math.hypot(nx, ny)
        return _Probe(t - SKIN, (nx / norm, ny / norm), obstacle, ground, ceiling)

    def _read_sweep(
        self,
        hits: Hits,
        normals: NDArray[np.float32],
        lead: NDArray[np.float64],
        ux: float,
        uy: float,
    ) -> tuple[float, tuple[float, float], int]:
        """Return the free distance, the facing normal and the id of the nearest obstacle."""
        sweep = len(lead)
        t = hits.t[:sweep]
        if t.min() == np.inf:  # the usual case, worth its shortcut
            return math.inf, (0.0, 0.0), 0
        n = normals[:sweep]
        # Surfaces flat enough to walk on (a ramp ahead) are ground, not walls; faces seen from
        # behind are the way out of something the body is already in, which it may take.
        wall = (n[:, 2] < self._cos_slope) & (n[:, 0] * ux + n[:, 1] * uy < 0)
        t = np.where(wall, t - lead, np.inf)
        j = int(np.argmin(t))
        if not np.isfinite(t[j]):
            return math.inf, (0.0, 0.0), 0
        nx, ny = float(n[j, 0]), float(n[j, 1])
        norm = math.hypot(nx, ny)
        obstacle = int(self.caster.table.object_id[hits.triangle[j]])
        return float(t[j]) - SKIN, (nx / norm, ny / norm), obstacle

    def _read_ground(
        self, hits: Hits, normals: NDArray[np.float32], sweep: int, feet: float, n: int
    ) -> tuple[list[float], list[int]]:
        """Return the feet height at each sample (nan if refused) and who blocks the head."""
        # Plain Python: for a handful of samples it beats a dozen small numpy calls.
        t = hits.t[sweep:].tolist()
        nz = normals[sweep:, 2].tolist()
        base = feet + self._base
        ground, ceiling = [], []
        for row in range(0, n * PER_SAMPLE, PER_SAMPLE):
            z = _standing_height(feet, base - t[row], nz[row], self._cos_slope)
            room = z + self.shape.height - FLAT - base  # how far up the head reaches
            blocker = 0
            if min(t[row + 1 : row + PER_SAMPLE]) < room:  # rare: something overhead
                blocker = self._ceiling(hits, t, nz, sweep, row, room)
            ground.append(math.nan if blocker else z)
            ceiling.append(blocker)
        return ground, ceiling

    def _ceiling(
        self, hits: Hits, t: list[float], nz: list[float], sweep: int, row: int, room: float
    ) -> int:
        """Return the id of what the up rays of the sample at ``row`` meet below ``room``.

        ``t`` and ``nz`` list the sample rays only: ray ``k`` of them is ``sweep + k`` of a probe.
        """
        # Only undersides seen from below are ceilings; a rim ray starting inside a higher
        # stair sees that step's top from within, which is no ceiling.
        low = [k for k in range(row + 1, row + PER_SAMPLE) if nz[k] < 0 and t[k] < room]
        if not low:
            return 0
        nearest = min(low, key=t.__getitem__)
        return int(self.caster.table.object_id[hits.triangle[sweep + nearest]])

    def _check_bounds(self, pose: Pose) -> None:
        """Raise if ``pose`` lies outside the scene's bounds."""
        xmin, ymin, xmax, ymax = self.caster.scene.bounds
        if not (xmin <= pose.x <= xmax and ymin <= pose.y <= ymax):
            raise InvalidPoseError(
                f"walker at {pose}: outside the scene bounds "
                f"x {xmin:g}..{xmax:g}, y {ymin:g}..{ymax:g}"
            )

    def _ground_at(self, pose: Pose) -> float:
        """Return the walkable height within a step of ``pose.z`` under the pose."""
        step = self.shape.step
        origin = np.array([[pose.x, pose.y, pose.z + step + CLEARANCE]])
        hits = self.caster.cast(origin, np.array([[0.0, 0.0, -1.0]]), 2 * step + CLEARANCE)
        nz = float(self.caster.table.normal[hits.triangle[0], 2])
        if not np.isfinite(hits.t[0]):
            raise InvalidPoseError(f"walker at {pose}: no ground within {step:g} m of the feet")
        if nz <= 0:
            name = self._names[int(self.caster.object_ids(hits)[0])]
            raise InvalidPoseError(f"walker at {pose}: the feet are inside {name!r}")
        if nz < self._cos_slope:
            raise InvalidPoseError(
                f"walker at {pose}: ground steeper than {self.shape.max_slope:g} degrees"
            )
        ground = pose.z + step + CLEARANCE - float(hits.t[0])
        return pose.z if abs(ground - pose.z) < FLAT else round(ground, 6) + 0.0

    def _check_clear(self, pose: Pose, feet: float) -> None:
        """Raise if the body standing at ``feet`` would intersect geometry."""
        origins, directions, tmax = clearance_rays(pose.x, pose.y, feet, self.shape)
        hits = self.caster.cast(origins, directions, tmax)
        nz = self.caster.table.normal[hits.triangle, 2]
        radial = len(origins) - 1
        inside = bool(nz[-1] > 0 and np.isfinite(hits.t[-1]))  # the up ray sees a top from within
        low_ceiling = hits.t[-1] < self.shape.height - self._base
        touching = np.isfinite(hits.t[:radial])
        if touching.any() or inside or low_ceiling:
            j = radial if not touching.any() else int(np.argmax(touching))
            name = self._names[int(self.caster.object_ids(hits)[j])]
            raise InvalidPoseError(f"walker at {pose}: the body would intersect {name!r}")


def _usable(probe: _Probe, piece: float, feet: float) -> tuple[int, _Stop]:
    """Return how many of a probe's samples the walker may use, and why it stops there."""
    for i, ground in enumerate(probe.ground):
        if piece * (i + 1) > probe.free:
            return i, _Stop.WALL
        if math.isnan(ground):
            return i, _Stop.REFUSED
        if abs(ground - feet) > REPROBE:
            # The sweep ran at the old height: keep this sample, then probe from the new one.
            return i + 1, _Stop.CLIMBED if i + 1 < len(probe.ground) else _Stop.DONE
    return len(probe.ground), _Stop.DONE


def _standing_height(feet: float, ground: float, nz: float, cos_slope: float) -> float:
    """Return where the feet stand on ground at ``ground`` with normal z ``nz``, nan if nowhere.

    Walkable is a surface no steeper than the slope limit, or any upward face when going down.
    A down ray seeing a face from behind started inside something solid; a miss has a zero
    normal (the "no hit" row) and an infinite distance.
    """
    if abs(ground - feet) < FLAT:
        ground = feet
    if nz >= cos_slope or (nz > 0 and ground <= feet):
        return ground
    return math.nan


def _slide(rx: float, ry: float, normal: tuple[float, float]) -> tuple[float, float]:
    """Return the move ``(rx, ry)`` without its part going into a face of unit ``normal``."""
    nx, ny = normal
    into = rx * nx + ry * ny
    if into >= 0:
        return rx, ry
    return rx - into * nx, ry - into * ny
