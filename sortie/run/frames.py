"""Recorded frames, stored once by content hash beside the results store.

A frame is a PNG at ``<store folder>/frames/<first two hex digits>/<sha256>.png``; step records
name it by its hash. Identical images (a robot standing still, a repeat of a deterministic
episode) are therefore written once, and a run's frames survive moving the store's folder.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np
from PIL import Image

from sortie.core.errors import ConfigError
from sortie.core.observation import MissionObservation

FRAMES_FOLDER = "frames"


def frame_path(root: Path, digest: str) -> Path:
    """Return where the frame with sha256 ``digest`` lives under the store folder ``root``."""
    return root / FRAMES_FOLDER / digest[:2] / f"{digest}.png"


def encode_frame(image: np.ndarray) -> bytes:
    """Return ``image`` (H×W×3 uint8 RGB, or H×W float depth in metres) as PNG bytes.

    The hash of these bytes names the frame; it depends on Pillow's and zlib's encoder, so
    the same image may get another name on a machine with other versions (it is still found
    by the name its record holds).
    """
    if image.dtype != np.uint8:
        # Depth in metres: kept as 16-bit millimetres (clipped at 65.535 m), exact enough to view.
        image = np.clip(np.nan_to_num(image * 1000.0), 0, 65535).astype(np.uint16)
    out = io.BytesIO()
    # Fixed compression settings: the same image always gives the same bytes, hence the same hash.
    Image.fromarray(image).save(out, format="PNG", compress_level=6)
    return out.getvalue()


def save_frame(root: Path, image: np.ndarray) -> str:
    """Store ``image`` under ``root`` unless it is already there; return its sha256."""
    data = encode_frame(image)
    digest = hashlib.sha256(data).hexdigest()
    path = frame_path(root, digest)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)  # whole file or none, even with several writers
    return digest


def load_frame(root: Path, digest: str) -> np.ndarray:
    """Return the stored frame ``digest`` as an array.

    Raises:
        ConfigError: the frame is missing, or its bytes do not match its hash.
    """
    path = frame_path(root, digest)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: recorded frame missing ({error.strerror})") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise ConfigError(f"{path}: frame content does not match its hash; the file is damaged")
    return np.asarray(Image.open(io.BytesIO(data)))


class FrameKeeper:
    """Stores the ego RGB image seen after each step (not the one before the first) by hash.

    Which images an observation offers, and under what names, is its own to say
    (``MissionObservation.kept_images``: a household round's four views, say).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, observation: MissionObservation) -> dict[str, str]:
        """Save the observation's RGB frames; return their hashes by name (``{}``: none)."""
        kept = observation.kept_images().items()
        return {name: save_frame(self.root, image) for name, image in kept}
