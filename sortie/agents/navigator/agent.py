"""``navigator``: a learned visuomotor policy for rescue, trained on the oracle's demos.

It sees only its sensors: the RGB and depth images (sampled down to the network's size from
whatever camera the run has; ``--camera 64x64@90`` renders no more than it needs), the goal
image of its phase from the brief (the casualty's ``reference`` until it carries, then the
``stretcher``, else the ``ambulance``), and whether it carries the casualty. A GRU carries its
memory from step to step within an episode, so the way back can draw on the way out. Each
step it takes the most likely of nine discrete actions (``policy.ACTIONS``: six moves and the
three interactions), so the same checkpoint and observations give the same actions.
``sortie train navigator`` makes the checkpoint (docs/training.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sortie.core.actions import Action
from sortie.core.errors import ConfigError, MissingExtraError
from sortie.core.observation import Brief, MissionObservation, Sensor

NEEDS_TORCH = "agent 'navigator' needs: pip install sortie[train] (torch)"


class NavigatorAgent:
    """A small learned policy: CNN encoders for the view and the phase's goal image, a GRU.

    Behaviour-cloned from the oracle's demos and improved with DAgger by ``sortie train
    navigator``; needs ``-a checkpoint=PATH``.
    """

    name = "navigator"
    families = frozenset({"rescue"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB, Sensor.DEPTH})

    def __init__(self, checkpoint: str = "", checkpoint_sha256: str = "") -> None:
        """Load the policy.

        Args:
            checkpoint: the file ``sortie train navigator`` wrote (``navigator.pt``).
            checkpoint_sha256: the digest the file must have; a run sets it from the file at
                its start (``pinned_args``), so a file retrained mid-run is refused.

        Raises:
            ConfigError: no checkpoint given, one that cannot be loaded, or one whose digest
                is not ``checkpoint_sha256`` (one line says why).
        """
        if not checkpoint:
            raise ConfigError(
                "agent 'navigator' needs -a checkpoint=PATH (sortie train navigator writes "
                "one: train-navigator/share-100/navigator.pt)"
            )
        policy = _policy_module()
        self._policy = policy
        self.net, self.facts = policy.load_checkpoint(Path(checkpoint))
        self.digest = _digest(Path(checkpoint))
        if checkpoint_sha256 and checkpoint_sha256 != self.digest:
            raise ConfigError(
                f"navigator checkpoint {checkpoint}: sha256 {self.digest[:16]}…, but this run "
                f"was started with {checkpoint_sha256[:16]}… (the file changed since; give a "
                "retrained checkpoint its own path and a new run id)"
            )
        self._state: Any = None
        self._goals: Any = None

    def pinned_args(self) -> dict[str, str]:
        """Return the checkpoint's digest, stored with the run's arguments."""
        return {"checkpoint_sha256": self.digest}

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode: an empty memory, the brief's goal images read once."""
        size = self.net.shape.size
        self._state = None
        self._goals = self._policy.torch.from_numpy(self._policy.goal_inputs(brief, size))[None]

    def act(self, observation: MissionObservation) -> Action:
        """Return the most likely action given this view and the memory so far."""
        logits = self.step_logits(observation)
        return self._policy.ACTIONS[int(logits.argmax())][1]

    def step_logits(self, observation: MissionObservation) -> Any:
        """Advance the memory by one observation; return the action logits (a torch vector)."""
        policy, torch = self._policy, self._policy.torch
        if self._goals is None:
            raise ConfigError("navigator: act before reset; reset it with the episode's brief")
        size = self.net.shape.size
        frames = observation.frames
        view = policy.view_input(frames.rgb, frames.depth, size)
        with torch.no_grad(), policy.one_thread():
            logits, self._state = self.net(
                torch.from_numpy(view)[None, None],
                self._goals,
                torch.tensor([[float(observation.carrying)]]),
                self._state,
            )
        return logits[0, 0]


def _digest(path: Path) -> str:
    """Return the sha256 of the file at ``path``, hex."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _policy_module() -> Any:
    """Return ``sortie.agents.navigator.policy`` (it imports torch), or say how to install it."""
    try:
        from sortie.agents.navigator import policy
    except ImportError as error:
        raise MissingExtraError(f"{NEEDS_TORCH} ({error})") from None
    return policy
