"""Ego-view clips: the frames an episode recorded, as a WebM video (an animated GIF fallback).

Videos are VP9 in WebM, encoded by PyAV's bundled libvpx at its real-time setting (a few
kilobytes and milliseconds per clip), which every Chromium and Firefox plays. Where PyAV
cannot be imported or cannot encode, the clip is an animated GIF instead, written with
Pillow directly: its fast octree palette is three times quicker than the median cut
imageio's writer leaves it to, and gives files half the size.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from sortie.core.records import StepRecord
from sortie.run.frames import load_frame

PREFERRED_SENSORS = ("rgb", "front")
"""The frames a clip is made of, if recorded: the ego RGB image, or a household front view."""
MAX_FRAMES = 120
"""Longer episodes are sampled evenly down to this many frames, to keep files small."""
FRAME_SECONDS = 0.1


def clip_sensor(steps: Sequence[StepRecord]) -> str | None:
    """Return the sensor to make a clip of (``rgb``, else ``front``), or None with no frames."""
    sensors = {name for step in steps for name in step.frames}
    if not sensors:
        return None
    return next((p for p in PREFERRED_SENSORS if p in sensors), min(sensors))


def clip_digests(steps: Sequence[StepRecord], sensor: str, limit: int = MAX_FRAMES) -> list[str]:
    """Return the frame hashes of ``sensor`` in step order, sampled evenly to at most ``limit``."""
    digests = [step.frames[sensor] for step in steps if sensor in step.frames]
    if len(digests) <= limit:
        return digests
    picks = np.linspace(0, len(digests) - 1, limit).round().astype(int)
    return [digests[i] for i in picks]


def write_clip(steps: Sequence[StepRecord], frames_root: Path, stem: Path) -> Path | None:
    """Write the episode's ego-view clip; return its file, or None if no frames were kept.

    The clip is ``stem`` + ``.webm`` when a video can be encoded, else ``stem`` + ``.gif``.

    Raises:
        ConfigError: a recorded frame is missing or damaged.
    """
    sensor = clip_sensor(steps)
    if sensor is None:
        return None
    frames = [_viewable(load_frame(frames_root, d)) for d in clip_digests(steps, sensor)]
    stem.parent.mkdir(parents=True, exist_ok=True)
    video = write_webm(frames, stem.with_name(f"{stem.name}.webm"))
    return video or write_gif(frames, stem.with_name(f"{stem.name}.gif"))


def write_webm(frames: Sequence[np.ndarray], path: Path) -> Path | None:
    """Write ``frames`` (H×W×3 uint8) as a VP9 WebM at ``path``; None if PyAV cannot."""
    try:
        import av
    except ImportError:
        return None
    height, width = (2 * (n // 2) for n in frames[0].shape[:2])  # VP9 wants even sizes
    try:
        with av.open(str(path), "w", format="webm") as container:
            stream = container.add_stream("libvpx-vp9", rate=round(1 / FRAME_SECONDS))
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.options = {"deadline": "realtime", "cpu-used": "8", "crf": "30", "b:v": "0"}
            for frame in frames:
                image = np.ascontiguousarray(frame[:height, :width])
                container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
            container.mux(stream.encode())
    except (av.FFmpegError, ValueError):
        path.unlink(missing_ok=True)
        return None
    return path


def write_gif(frames: Sequence[np.ndarray], path: Path) -> Path:
    """Write ``frames`` (H×W×3 uint8) as an animated GIF at ``path``."""
    images = [
        Image.fromarray(frame).quantize(256, method=Image.Quantize.FASTOCTREE) for frame in frames
    ]
    images[0].save(
        path,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=int(FRAME_SECONDS * 1000),
        loop=0,
    )
    return path


def _viewable(image: np.ndarray) -> np.ndarray:
    """Return ``image`` as H×W×3 uint8; depth (16-bit millimetres) becomes grey, near bright."""
    if image.dtype != np.uint8:
        scaled = image.astype(np.float64) / max(1.0, float(image.max()))
        image = ((1.0 - scaled) * 255).astype(np.uint8)
    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=2)
    return np.ascontiguousarray(image[..., :3])
