"""Checking aerial missions in their world: free goals, views of the target, an expert replay.

One embedded backend (a multirotor with MissionBench's 256² camera pitched −45°, rendering
only the semantic image) answers every question: a pose is free if the body can be placed
there (``InvalidPoseError`` otherwise, naming what it touches or is inside); a goal shows its
target if the semantic image rendered there has the target's instance near the centre,
covering enough pixels, and in the small window round the centre, which is the line of
sight from the goal to the target (viewing poses aim the centre ray at the target's top);
a mission is solvable if the expert completes it in a replay with the run defaults (``sim``
clock, run seed 0), so ``sortie run SUITE --agent oracle`` repeats that replay step for step.
"""

from __future__ import annotations

import numpy as np

from sortie.backends.catalog import DEFAULT_BACKEND, build_backend
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, InvalidPoseError
from sortie.core.pose import Pose
from sortie.generation.rejected import Rejected
from sortie.generation.validate import oracle_header, oracle_positions
from sortie.missions.aerial.mission import AerialMission
from sortie.missions.aerial.spec import CAMERA, aerial_data
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Scene
from sortie.sim.worlds import build_world

MIN_PIXELS = 150
"""Pixels (of 256²) the target must cover at its goal."""
MIN_COUNTED_PIXELS = 8
"""Pixels each counted object must cover at the goal, so that all can be counted."""
CENTRE = 0.2
"""The target's pixels must be centred within this fraction of the image side of the middle."""
SIGHT_WINDOW = 8
"""Half-width (pixels) of the window round the image centre that must show the target."""
INSIDE_RAYS = np.array(
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]
)
"""Up and the four horizontal directions: from inside a closed shape each meets its inside."""


class AerialValidator:
    """Checks and replays candidate aerial missions on one reusable embedded backend."""

    def __init__(self) -> None:
        """Create the backend: a multirotor with the aerial camera, semantic image only."""
        self.backend = build_backend(
            DEFAULT_BACKEND, {}, body="multirotor", sensors=("semantic",), camera=CAMERA
        )
        self._scene: tuple[str, Scene] | None = None
        self._caster: tuple[Scene, RayCaster] | None = None

    def scene(self, spec: EpisodeSpec) -> Scene:
        """Return the built world of ``spec`` (kept while the world stays the same)."""
        key = spec.world.model_dump_json()
        if self._scene is None or self._scene[0] != key:
            world = spec.world
            self._scene = (key, build_world(world.builder, world.seed, world.params))
        return self._scene[1]

    def inside(self, spec: EpisodeSpec, pose: Pose) -> str | None:
        """Return the object that encloses ``pose``, if any.

        The multirotor's placement check looks only 0.4 m around the body, so a pose in the
        middle of a house passes it; here rays up and to the four sides that all meet the
        inner side of faces (normals pointing away) mean the point is enclosed.
        """
        scene = self.scene(spec)
        if self._caster is None or self._caster[0] is not scene:
            self._caster = (scene, RayCaster(scene))
        caster = self._caster[1]
        origins = np.broadcast_to(np.array(pose.position()), INSIDE_RAYS.shape)
        hits = caster.cast(origins, INSIDE_RAYS)
        hit = np.isfinite(hits.t)
        facing_out = np.einsum("ij,ij->i", caster.table.normal[hits.triangle], INSIDE_RAYS) > 0
        if not (hit & facing_out).all():
            return None
        return scene.objects[int(caster.object_ids(hits)[0]) - 1].name

    def look(self, spec: EpisodeSpec, pose: Pose) -> np.ndarray:
        """Return the semantic image seen from ``pose``; reject a pose that is not free."""
        enclosing = self.inside(spec, pose)
        if enclosing is not None:
            raise Rejected(f"pose not free: inside {enclosing!r}")
        try:
            observation = self.backend.reset(spec.model_copy(update={"start": pose}), 0)
        except InvalidPoseError as error:
            raise Rejected(f"pose not free: {str(error).rsplit(': ', 1)[-1]}") from None
        assert observation.frames.semantic is not None
        return observation.frames.semantic

    def check_view(
        self, spec: EpisodeSpec, goal: Pose, target: str, counted: tuple[str, ...] = ()
    ) -> None:
        """Reject ``goal`` unless it is free and shows ``target`` (and all of ``counted``)."""
        image = self.look(spec, goal)
        scene = self.scene(spec)
        ys, xs = np.nonzero(image == scene.id_of(target))
        side = image.shape[0]
        if len(xs) < MIN_PIXELS:
            raise Rejected(f"target covers {len(xs)} < {MIN_PIXELS} pixels at the goal")
        if max(abs(xs.mean() - side / 2), abs(ys.mean() - side / 2)) > CENTRE * side:
            raise Rejected("target off the centre of the goal view")
        middle, w = side // 2, SIGHT_WINDOW
        if not np.any(
            image[middle - w : middle + w, middle - w : middle + w] == scene.id_of(target)
        ):
            raise Rejected("line of sight from the goal to the target is blocked")
        for name in counted:
            if np.count_nonzero(image == scene.id_of(name)) < MIN_COUNTED_PIXELS:
                raise Rejected("a counted object is hidden at the goal")

    def check_free(self, spec: EpisodeSpec, pose: Pose) -> None:
        """Reject ``pose`` unless the body can be placed there."""
        self.look(spec, pose)

    def replay(self, spec: EpisodeSpec) -> list[list[float]]:
        """Run the expert on ``spec``; return its positions (the start, then one per step).

        Raises:
            Rejected: if the expert does not complete the mission.
        """
        return oracle_positions(
            AerialMission(self.backend), self.backend.oracle_view(), oracle_header(spec)
        )

    def check(self, spec: EpisodeSpec) -> None:
        """Check a finished mission as a boundary does: raise ConfigError naming the reason.

        Catches what hand-written or edited missions get wrong: a target that is not in the
        world, a goal or start inside geometry, a patrol route of fewer than two points, a
        goal that does not show its target, a mission the expert cannot complete.
        """
        data = aerial_data(spec)  # a patrol of fewer than two points fails here
        scene = self.scene(spec)
        where = f"episode {spec.episode_id} in {spec.world.builder}(seed {spec.world.seed})"
        absent = [
            name
            for name in {**spec.targets, "mission.target": data.target}.values()
            if name is not None and name not in scene
        ]
        if absent:
            raise ConfigError(
                f"{where}: the mission refers to objects absent from the world: "
                f"{', '.join(sorted(absent))}"
            )
        try:
            self.check_free(spec, data.goal)
            self.check_free(spec, spec.start)
            if data.target is not None and "patrol" not in data.types:
                self.check_view(spec, data.goal, data.target)
            self.replay(spec)
        except Rejected as why:
            goal = [round(v, 2) for v in data.goal.as_list()]
            raise ConfigError(f"{where}: goal {goal}: {why}") from None
