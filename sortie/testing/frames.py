"""Put recorded frames into existing trajectory records, for tests of clips and reports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sortie.core.records_io import write_atomic
from sortie.run.frames import save_frame


def add_frames(
    record: Path, root: Path, images: Sequence[np.ndarray], sensor: str = "rgb"
) -> list[str]:
    """Store ``images`` under ``root`` as the ``sensor`` frames of the record's first steps.

    The record is rewritten as if the run had kept these frames; returns their hashes.
    """
    lines = record.read_text().splitlines()
    digests = [save_frame(root, image) for image in images]
    for number, digest in enumerate(digests, start=1):  # line 0 is the header
        step = json.loads(lines[number])
        if step.get("kind") != "step":
            raise ValueError(
                f"{record}:{number + 1}: only {number - 1} steps for {len(images)} frames"
            )
        step["frames"] = {**step.get("frames", {}), sensor: digest}
        lines[number] = json.dumps(step)
    write_atomic(record, "\n".join(lines) + "\n")
    return digests


def colour_frames(count: int, size: int = 16) -> list[np.ndarray]:
    """Return ``count`` flat RGB frames, each a different colour (each hash differs)."""
    return [
        np.full((size, size, 3), (40 * k % 256, 255 - 30 * k % 256, 128), np.uint8)
        for k in range(count)
    ]
