"""The built worlds of a process, shared by its embedded backends.

Building a world (its builder, the episode's placements, the ray caster's static tables and
Embree scenes) costs 20 ms to almost a second; a process often runs several episodes in one
world at once (the copies of a vector env) or comes back to one (a reset). Each world is
built once and shared: its objects and static part never change, and every backend runs its
own ``Scene.fresh_copy`` with a state of its own.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial

from sortie.core.episode import Placement, WorldSpec
from sortie.sim.placements import with_placements
from sortie.sim.raycast import StaticPart
from sortie.sim.scene import Scene
from sortie.sim.worlds import build_world

WORLDS_KEPT = 6
"""Built worlds a process keeps after no backend is in them, for resets that come back."""
TRIANGLES_KEPT = 300_000
"""Triangles those worlds may hold together (about 0.7 KB each with their tables and Embree
scenes: 200 MB); the last world asked for stays whatever its size."""


@dataclass(eq=False)
class SharedWorld:
    """What every backend in one built world shares: nothing any episode changes.

    Attributes:
        scene: the built scene, never run itself: each backend runs a ``fresh_copy``.
        static: the ray caster's static part (tables, Embree scenes) of its objects.
        base: the world before the episode's placements (other placements reuse it).
    """

    scene: Scene
    static: StaticPart
    base: Scene

    @property
    def triangles(self) -> int:
        """Return how many triangles the world has (what its memory grows with)."""
        return len(self.static.table) + sum(
            p.triangle_count for _, o in self.static.dynamic_objects for p in o.parts
        )


class SharedWorlds:
    """The worlds built in this process, by world spec and placements.

    A world stays while a backend is in it (weakly referenced), and the last ``kept`` worlds
    asked for (at most ``triangles`` triangles together) stay besides, so that a reset to a
    world built before (by this backend or another, such as another copy of a vector env)
    skips the build. Worlds before placements are kept as long as a world built on them. One
    lock covers look-ups and builds: a thread asking for a world waits while another builds
    one (vector envs step their copies in one thread, or in processes of their own, each with
    its own worlds). A process forked while another of its threads held the lock (building a
    world) would inherit it held, by no thread of its own: the child takes a fresh lock.
    """

    def __init__(self, kept: int = WORLDS_KEPT, triangles: int = TRIANGLES_KEPT) -> None:
        """Keep the last ``kept`` worlds used (``triangles`` at most) besides those in use."""
        self.kept, self.triangles = kept, triangles
        self._live: weakref.WeakValueDictionary[str, SharedWorld] = weakref.WeakValueDictionary()
        self._recent: OrderedDict[str, SharedWorld] = OrderedDict()
        self._bases: weakref.WeakValueDictionary[str, Scene] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        if hasattr(os, "register_at_fork"):  # POSIX
            os.register_at_fork(after_in_child=partial(_fresh_lock, weakref.ref(self)))

    def get(self, world: WorldSpec, placements: list[Placement]) -> SharedWorld:
        """Return the world ``world`` with ``placements``, built now if not kept."""
        world_key = world.model_dump_json()
        key = world_key + "".join("\n" + p.model_dump_json() for p in placements)
        with self._lock:
            shared = self._live.get(key)
            if shared is None:
                shared = self._live[key] = self._build(world, world_key, placements)
            self._recent[key] = shared
            self._recent.move_to_end(key)
            self._bound()
            return shared

    def _bound(self) -> None:
        """Forget the least recently asked-for worlds beyond the count or the triangles."""
        total = sum(w.triangles for w in self._recent.values())
        while len(self._recent) > self.kept or (len(self._recent) > 1 and total > self.triangles):
            total -= self._recent.popitem(last=False)[1].triangles

    def recent(self) -> list[SharedWorld]:
        """Return the worlds kept besides those in use, least recently asked for first."""
        return list(self._recent.values())

    def clear(self) -> None:
        """Forget every kept world (backends keep the ones they are in)."""
        with self._lock:
            self._live.clear()
            self._recent.clear()
            self._bases.clear()

    def _build(self, world: WorldSpec, world_key: str, placements: list[Placement]) -> SharedWorld:
        base = self._bases.get(world_key)
        if base is None:
            base = self._bases[world_key] = build_world(world.builder, world.seed, world.params)
        scene = with_placements(base, placements, world.seed)
        return SharedWorld(scene, StaticPart(scene), base)


def _fresh_lock(ref: weakref.ref[SharedWorlds]) -> None:
    """Give a forked child's worlds a lock of their own (the parent's may have been held)."""
    worlds = ref()
    if worlds is not None:
        worlds._lock = threading.Lock()


SHARED_WORLDS = SharedWorlds()
"""This process's built worlds, shared by its embedded backends."""
