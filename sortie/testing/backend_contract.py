"""``BackendContract``: the behaviour every backend owes the missions, as a pytest suite.

A backend proves itself by subclassing and overriding the two factories::

    class TestMyBackend(BackendContract):
        def make_backend(self):
            return MyBackend(...)

        def make_episode(self):
            return EpisodeSpec(...)  # a world with an object called ``self.landmark``
"""

from __future__ import annotations

import math

import numpy as np

from sortie.backends.base import Backend, StepOutcome
from sortie.core.actions import Fly, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import SortieError
from sortie.core.observation import Observation
from sortie.core.pose import Pose


class BackendContract:
    """Tests any Backend must pass; subclass and override the factories."""

    landmark: str = "wall_0"
    """An object the episode's world must contain."""

    def make_backend(self) -> Backend:
        """Return a fresh backend configured with RGB, depth and semantic sensors."""
        raise NotImplementedError

    def make_episode(self) -> EpisodeSpec:
        """Return an episode whose world contains ``landmark`` and whose start is valid."""
        raise NotImplementedError

    def forward(self) -> Move | Fly:
        """Return an action that moves the body forward (override for flying bodies)."""
        return Move(turn=0.0, speed=1.0)

    def test_is_a_backend(self) -> None:
        """The backend satisfies the Backend protocol."""
        assert isinstance(self.make_backend(), Backend)

    def test_reset_places_the_body_at_the_start(self) -> None:
        """After reset the body stands at the episode's start pose."""
        backend, episode = self.make_backend(), self.make_episode()
        observation = backend.reset(episode, seed=0)
        assert isinstance(observation, Observation)
        assert _close(backend.pose(), episode.start, 0.05)
        backend.close()

    def test_frames_have_the_declared_types(self) -> None:
        """RGB is uint8 HxWx3, depth float32 HxW, semantic int32 HxW, all the same size."""
        backend = self.make_backend()
        frames = backend.reset(self.make_episode(), seed=0).frames
        assert frames.rgb is not None and frames.depth is not None
        assert frames.semantic is not None
        assert frames.rgb.dtype == np.uint8 and frames.rgb.shape[2] == 3
        assert frames.depth.dtype == np.float32 and frames.semantic.dtype == np.int32
        assert frames.rgb.shape[:2] == frames.depth.shape == frames.semantic.shape
        backend.close()

    def test_same_seed_same_observations(self) -> None:
        """Two resets with the same seed and the same actions give identical frames and poses."""
        runs = []
        for _ in range(2):
            backend = self.make_backend()
            backend.reset(self.make_episode(), seed=3)
            outcomes = [backend.step(self.forward()) for _ in range(3)]
            runs.append(outcomes)
            backend.close()
        for a, b in zip(*runs, strict=True):
            assert a.observation.pose == b.observation.pose
            assert np.array_equal(a.observation.frames.rgb, b.observation.frames.rgb)

    def test_step_moves_the_body_and_reports(self) -> None:
        """A forward step returns a StepOutcome whose observation carries the new pose."""
        backend = self.make_backend()
        backend.reset(self.make_episode(), seed=0)
        outcome = backend.step(self.forward())
        assert isinstance(outcome, StepOutcome)
        assert outcome.observation.pose == backend.pose()
        assert outcome.moved >= 0.0
        backend.close()

    def test_queries_answer_for_a_known_object(self) -> None:
        """distance_to and height_difference are finite for an object of the world."""
        backend = self.make_backend()
        backend.reset(self.make_episode(), seed=0)
        assert math.isfinite(backend.distance_to(self.landmark))
        assert math.isfinite(backend.height_difference(self.landmark))
        assert isinstance(backend.visible(self.landmark), bool)
        assert backend.holding() is None and backend.collided() is False
        backend.close()

    def test_unknown_object_is_a_clear_error(self) -> None:
        """Asking about an object that does not exist raises a SortieError naming it."""
        backend = self.make_backend()
        backend.reset(self.make_episode(), seed=0)
        try:
            backend.distance_to("no_such_object_42")
        except SortieError as error:
            assert "no_such_object_42" in str(error)
        else:
            raise AssertionError("distance_to('no_such_object_42') did not raise")
        backend.close()

    def test_close_twice_is_harmless(self) -> None:
        """close() may be called more than once."""
        backend = self.make_backend()
        backend.reset(self.make_episode(), seed=0)
        backend.close()
        backend.close()


def _close(a: Pose, b: Pose, tolerance: float) -> bool:
    return a.distance(b) <= tolerance and abs((a.yaw - b.yaw + 180) % 360 - 180) <= 1e-6
