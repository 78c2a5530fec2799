"""The perception probe (MissionBench): can the model find the target in the first frame?

For each mission of a suite the model sees the instruction and the first drone image only,
and answers the target's bounding box (0–1000, or none) and its distance in metres. The
truth comes from the simulator: the box of the target's pixels in the semantic image, and
the 3D distance from the camera to the target's base. Per mission: IoU of the boxes and the
distance error; over the suite: mean IoU, distance RMSE, and, given a run of the same suite,
their Pearson correlation with each mission's MP (the paper finds r = 0.46 and −0.32).
Missions whose target is not in the first frame are counted and left out of the mean IoU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field
from scipy import stats

from sortie.backends.catalog import DEFAULT_BACKEND, build_backend
from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import Suite
from sortie.missions.aerial.spec import aerial_data
from sortie.models.client import ModelClient
from sortie.models.config import ModelConfig
from sortie.models.images import image_part

Box = tuple[float, float, float, float]
PROMPT = (
    "You are the camera of a drone, pitched 45 degrees down. Mission: {instruction}\n"
    "Find the mission's target in this image. Answer a JSON object with `box`: "
    "[x1, y1, x2, y2] in 0-1000 image coordinates (or null if it is not visible) and "
    "`distance`: your estimate of the target's distance from the drone in metres "
    "(or null)."
)


class ProbeAnswer(BaseModel):
    """What the model answers about the first frame."""

    box: list[float] | None = Field(default=None, min_length=4, max_length=4)
    distance: float | None = Field(default=None, ge=0)


@dataclass(frozen=True, slots=True)
class ProbeRow:
    """One mission: the true and predicted box and distance."""

    episode_id: str
    true_box: Box | None
    box: Box | None
    true_distance: float
    distance: float | None

    @property
    def iou(self) -> float:
        """Return the IoU of the boxes (NaN if the target is not in the frame)."""
        if self.true_box is None:
            return math.nan
        return 0.0 if self.box is None else box_iou(self.true_box, self.box)

    @property
    def distance_error(self) -> float:
        """Return predicted minus true distance (NaN without a prediction)."""
        return math.nan if self.distance is None else self.distance - self.true_distance


@dataclass(frozen=True, slots=True)
class ProbeSummary:
    """The probe over a suite."""

    missions: int
    unseen: int
    """Missions whose target is not in the first frame (left out of the mean IoU)."""
    mean_iou: float
    distance_rmse: float
    r_iou_mp: float
    """Pearson correlation of IoU and MP over missions (NaN without a run or < 3 pairs)."""
    r_distance_mp: float
    """Pearson correlation of the absolute distance error and MP."""


def box_iou(a: Box, b: Box) -> float:
    """Return the intersection over union of two ``[x1, y1, x2, y2]`` boxes (any corner order)."""
    ax1, ax2, ay1, ay2 = min(a[0], a[2]), max(a[0], a[2]), min(a[1], a[3]), max(a[1], a[3])
    bx1, bx2, by1, by2 = min(b[0], b[2]), max(b[0], b[2]), min(b[1], b[3]), max(b[1], b[3])
    inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return inter / union if union > 0 else 0.0


def true_box(semantic: NDArray[np.int32], instance: int) -> Box | None:
    """Return the box of ``instance``'s pixels in 0–1000 coordinates, or None if absent."""
    rows, cols = np.nonzero(semantic == instance)
    if rows.size == 0:
        return None
    height, width = semantic.shape
    return (
        1000.0 * cols.min() / width,
        1000.0 * rows.min() / height,
        1000.0 * (cols.max() + 1) / width,
        1000.0 * (rows.max() + 1) / height,
    )


def probe_suite(
    suite: Suite, model_args: Mapping[str, Any], camera: Mapping[str, Any]
) -> list[ProbeRow]:
    """Ask the model about the first frame of every mission of ``suite`` that names a target."""
    client = ModelClient(ModelConfig.from_args(dict(model_args)))
    backend = build_backend(
        DEFAULT_BACKEND, {}, body="multirotor", camera=camera, sensors=("rgb", "semantic")
    )
    try:
        return [
            _probe(client, backend, spec) for spec in suite.episodes if spec.targets.get("target")
        ]
    finally:
        backend.close()
        client.close()


def _probe(client: ModelClient, backend: Any, spec: EpisodeSpec) -> ProbeRow:
    observation = backend.reset(spec, 0)
    target = spec.targets["target"]
    assert observation.frames.rgb is not None and observation.frames.semantic is not None
    truth = true_box(observation.frames.semantic, backend.instance_id(target))
    distance = math.dist(backend.pose().position(), backend.position_of(target))
    content = [
        {"type": "text", "text": PROMPT.format(instruction=aerial_data(spec).instruction)},
        image_part(observation.frames.rgb, 0, "png"),
    ]
    reply = client.ask([{"role": "user", "content": content}], ProbeAnswer)
    answer = reply.value if isinstance(reply.value, ProbeAnswer) else ProbeAnswer()
    box = tuple(answer.box) if answer.box else None
    return ProbeRow(spec.episode_id, truth, box, distance, answer.distance)  # type: ignore[arg-type]


def summarise(rows: Sequence[ProbeRow], mp: Mapping[str, float] | None = None) -> ProbeSummary:
    """Return mean IoU, distance RMSE and, with MP per episode id, their correlations with MP."""
    seen = [r for r in rows if r.true_box is not None]
    errors = [r.distance_error for r in rows if not math.isnan(r.distance_error)]
    rmse = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else math.nan
    mean_iou = sum(r.iou for r in seen) / len(seen) if seen else math.nan
    return ProbeSummary(
        len(rows),
        len(rows) - len(seen),
        mean_iou,
        rmse,
        _pearson([(r.iou, mp.get(r.episode_id)) for r in seen] if mp else []),
        _pearson([(abs(r.distance_error), mp.get(r.episode_id)) for r in rows] if mp else []),
    )


def _pearson(pairs: Sequence[tuple[float, float | None]]) -> float:
    kept = [(x, y) for x, y in pairs if y is not None and not (math.isnan(x) or math.isnan(y))]
    if len(kept) < 3:
        return math.nan
    xs, ys = zip(*kept, strict=True)
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return math.nan  # a constant series has no correlation
    return float(stats.pearsonr(xs, ys).statistic)
