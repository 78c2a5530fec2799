"""The navigator's network, its inputs and its checkpoint file.

The policy is small on purpose (it trains on one CPU core in minutes): two convolutional
encoders, one for the ego view (RGB and depth stacked, four channels) and one for the goal
image (RGB), a GRU over the steps of an episode (the memory a way back needs), and one linear
head over ``ACTIONS``. Every image is sampled down to ``size`` pixels square by nearest
neighbour, whatever camera the run has, so the agent plays at any camera and the same
observation always gives the same input.

torch is imported by this module only: the agent and the training import it from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief

FORMAT = "sortie-navigator/1"
"""The checkpoint's format tag: a file without it is not a navigator checkpoint."""
FAR = 10.0
"""Depth beyond this (and where nothing was hit) reads as this, metres."""
ACTIONS: tuple[tuple[str, Action], ...] = (
    ("forward", Move(0.0, 1.5)),
    ("forward_left", Move(15.0, 1.5)),
    ("forward_right", Move(-15.0, 1.5)),
    ("turn_left", Move(30.0, 0.0)),
    ("turn_right", Move(-30.0, 0.0)),
    ("back", Move(0.0, -0.75)),
    ("grab", Interact(Interaction.GRAB)),
    ("drop", Interact(Interaction.DROP)),
    ("open_door", Interact(Interaction.OPEN_DOOR)),
)
"""The discrete actions, by name: moves within rescue's limits, then the interactions."""
ACTION_NAMES = tuple(name for name, _ in ACTIONS)
WALKING = 0.5
"""Speed (m/s) from which an expert's move counts as walking rather than turning on the spot."""
STRAIGHT = 7.5
"""Turn (degrees) below which an expert's walking move counts as straight ahead."""


@dataclass(frozen=True, slots=True)
class NetShape:
    """The sizes that decide the network's weights (kept in the checkpoint)."""

    size: int = 32
    """Side of the square images the network reads, pixels."""
    width: int = 16
    """Channels of the first convolution (the next two have twice as many)."""
    features: int = 64
    """Features of each encoder's output."""
    hidden: int = 128
    """The GRU's state size."""


def _encoder(channels: int, shape: NetShape) -> nn.Sequential:
    wide = 2 * shape.width
    side = -(-shape.size // 8)  # three stride-2 convolutions, padded
    return nn.Sequential(
        nn.Conv2d(channels, shape.width, 5, stride=2, padding=2),
        nn.ReLU(),
        nn.Conv2d(shape.width, wide, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(wide, wide, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(wide * side * side, shape.features),
        nn.ReLU(),
    )


class NavigatorNet(nn.Module):
    """Ego view and goal image -> features; a GRU over the steps; logits over ``ACTIONS``."""

    def __init__(self, shape: NetShape) -> None:
        """Build the layers for ``shape``."""
        super().__init__()
        self.shape = shape
        self.view = _encoder(4, shape)
        self.goal = _encoder(3, shape)
        self.gru = nn.GRU(2 * shape.features + 1, shape.hidden, batch_first=True)
        self.head = nn.Linear(shape.hidden, len(ACTIONS))

    def forward(
        self,
        views: torch.Tensor,
        goals: torch.Tensor,
        carrying: torch.Tensor,
        state: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return logits (B, T, actions) and the GRU's last state for a batch of sequences.

        Args:
            views: (B, T, 4, S, S) RGB and depth in [0, 1].
            goals: (B, 2, 3, S, S) each sequence's goal image before the pick-up and after it
                (encoded once per sequence, not once per step).
            carrying: (B, T) 1.0 while the casualty is carried: it picks the goal of each step.
            state: the GRU state to go on from (None: a new episode).
        """
        batch, steps = views.shape[:2]
        seen = self.view(views.flatten(0, 1)).view(batch, steps, -1)
        both = self.goal(goals.flatten(0, 1)).view(batch, 2, -1)
        phase = carrying.long().unsqueeze(-1).expand(-1, -1, both.shape[-1])
        wanted = torch.gather(both, 1, phase)
        inputs = torch.cat([seen, wanted, carrying.unsqueeze(-1)], dim=-1)
        out, last = self.gru(inputs, state)
        return self.head(out), last


def label_of(action: Action) -> int:
    """Return the index in ``ACTIONS`` of the discrete action nearest an expert's ``action``.

    Raises:
        ConfigError: an action that is neither a move nor an interaction.
    """
    if isinstance(action, Interact):
        return ACTION_NAMES.index(action.kind.value)
    if not isinstance(action, Move):
        raise ConfigError(f"navigator: cannot learn from a {type(action).__name__} action")
    if action.speed < -0.1:
        return ACTION_NAMES.index("back")
    if action.speed < WALKING:
        return ACTION_NAMES.index("turn_left" if action.turn >= 0 else "turn_right")
    if abs(action.turn) <= STRAIGHT:
        return ACTION_NAMES.index("forward")
    return ACTION_NAMES.index("forward_left" if action.turn > 0 else "forward_right")


def sample_down(image: NDArray[Any], size: int) -> NDArray[Any]:
    """Return ``image`` (H, W[, C]) resampled to ``size`` square by nearest neighbour."""
    rows = ((np.arange(size) + 0.5) * image.shape[0] / size).astype(np.int64)
    cols = ((np.arange(size) + 0.5) * image.shape[1] / size).astype(np.int64)
    return image[rows][:, cols]


def view_input(
    rgb: NDArray[np.uint8] | None, depth: NDArray[np.float32] | None, size: int
) -> NDArray[np.float32]:
    """Return the ego view as (4, size, size) floats: RGB / 255, then depth / ``FAR``, clipped.

    A missing image reads as zeros (the network then sees nothing there).
    """
    out = np.zeros((4, size, size), np.float32)
    if rgb is not None:
        out[:3] = sample_down(rgb, size).transpose(2, 0, 1) / 255.0
    if depth is not None:
        metres = np.nan_to_num(sample_down(depth, size), nan=FAR, posinf=FAR, neginf=0.0)
        out[3] = np.clip(metres, 0.0, FAR) / FAR
    return out


def goal_input(image: NDArray[np.uint8] | None, size: int) -> NDArray[np.float32]:
    """Return a goal image as (3, size, size) floats in [0, 1]; none: zeros."""
    if image is None:
        return np.zeros((3, size, size), np.float32)
    return (sample_down(image, size).transpose(2, 0, 1) / 255.0).astype(np.float32)


def goal_name(images: dict[str, Any], carrying: bool) -> str | None:
    """Return the goal image of the phase: the casualty's, else the stretcher's (or ambulance's).

    The agent tells the phases apart by whether it carries the casualty (docs/rescue.md, Goal
    images): before, the ``reference``; after, the ``stretcher`` it must hand off at (S4's
    goal, and S3's where there is no ambulance), else the ``ambulance``. None: the brief has
    neither (``-F goal_images=rescuebench`` gives only the reference).
    """
    wanted = ("stretcher", "ambulance") if carrying else ("reference",)
    return next((name for name in wanted if name in images), None)


def goal_inputs(brief: Brief, size: int) -> NDArray[np.float32]:
    """Return the brief's goal images before and after the pick-up, (2, 3, size, size)."""
    images = brief.images
    pick = [images.get(goal_name(images, carrying) or "") for carrying in (False, True)]
    return np.stack([goal_input(image, size) for image in pick])


def save_checkpoint(path: Path, net: NavigatorNet, facts: dict[str, Any]) -> None:
    """Write ``net`` and what made it (``facts``: JSON-like) to ``path``, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    content = {
        "format": FORMAT,
        "shape": asdict(net.shape),
        "actions": list(ACTION_NAMES),
        "state": net.state_dict(),
        "facts": json.loads(json.dumps(facts)),  # plain types: loadable with weights_only
    }
    torch.save(content, partial)
    partial.replace(path)


def load_checkpoint(path: Path) -> tuple[NavigatorNet, dict[str, Any]]:
    """Return the network saved at ``path`` (in eval mode) and its facts.

    Raises:
        ConfigError: no file there, not a navigator checkpoint, other actions, or weights
            that do not fit the network the checkpoint's shape describes (one line each).
    """
    where = f"navigator checkpoint {path}"
    if not path.is_file():
        raise ConfigError(f"{where}: no such file (sortie train navigator writes one)")
    try:
        content = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises pickle, zip and runtime errors alike
        raise ConfigError(f"{where}: not a torch checkpoint ({_first_line(error)})") from None
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise ConfigError(f"{where}: not a navigator checkpoint (expected format {FORMAT!r})")
    if content.get("actions") != list(ACTION_NAMES):
        raise ConfigError(
            f"{where}: actions {content.get('actions')} differ from this navigator's "
            f"{list(ACTION_NAMES)}"
        )
    net = NavigatorNet(_shape(where, content.get("shape")))
    _load_state(where, net, content.get("state"))
    return net.eval(), dict(content.get("facts") or {})


def _shape(where: str, given: Any) -> NetShape:
    try:
        return NetShape(**given)
    except TypeError:
        raise ConfigError(f"{where}: shape {given!r} is not a network shape") from None


def _load_state(where: str, net: NavigatorNet, state: Any) -> None:
    if not isinstance(state, dict):
        raise ConfigError(f"{where}: holds no weights")
    wanted = net.state_dict()
    missing = sorted(set(wanted) - set(state))
    extra = sorted(set(state) - set(wanted))
    if missing or extra:
        raise ConfigError(f"{where}: weights missing {missing[:3]}, unexpected {extra[:3]}")
    for name, tensor in wanted.items():
        if tuple(state[name].shape) != tuple(tensor.shape):
            raise ConfigError(
                f"{where}: {name} has shape {tuple(state[name].shape)}, the network's shape "
                f"{asdict(net.shape)} needs {tuple(tensor.shape)}"
            )
    net.load_state_dict(state)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block on one torch thread, then give back the process's thread count.

    One thread gives the same sums whatever the machine's cores.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def deterministic(seed: int) -> Iterator[None]:
    """Make torch's results in the block a function of ``seed`` on this machine.

    One thread, deterministic kernels, the global generator seeded; the process's thread count
    and kernel choice are given back after the block (the seed is not).
    """
    was = torch.are_deterministic_algorithms_enabled()
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    try:
        with one_thread():
            yield
    finally:
        torch.use_deterministic_algorithms(was)
