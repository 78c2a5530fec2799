"""A run's camera: the seeds' cameras by name, or a size, field of view and pitch as text.

``sortie run --camera`` and the gymnasium envs' ``camera=`` read a camera here. What is not
given keeps the family's camera (a preset's pitch included, where its seed does not fix
one), so ``--camera 640x640`` on an aerial run still looks 45° down.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from sortie.core.errors import ParameterError
from sortie.sim.camera import BODY_PITCH, CameraSpec

PRESETS: dict[str, dict[str, float]] = {
    "rescuebench": {"width": 640, "height": 640, "hfov": 110.0},
    "uni-navid": {"width": 224, "height": 224, "hfov": 110.0},
    "rocket2": {"width": 640, "height": 360, "hfov": 110.0},
    "seepointfly": {"width": 640, "height": 360, "hfov": 110.0},
    "missionbench": {"width": 1920, "height": 1080, "hfov": 90.0, "pitch": -45.0},
    "missionbench-fhd": {"width": 1920, "height": 1080, "hfov": 90.0, "pitch": -45.0},
    "missionbench-hd": {"width": 1280, "height": 720, "hfov": 90.0, "pitch": -45.0},
    "missionbench-sd": {"width": 854, "height": 480, "hfov": 90.0, "pitch": -45.0},
}
"""The seeds' cameras. RescueBench's agents see 640×640 (Uni-NaVid 224×224, ROCKET-2 and
SeePointFly 640×360) with the field of view set to 110°; MissionBench's drone 1920×1080 at 90°,
pitched 45° down, and its resolution ablation SD, HD and FHD (SD taken as 854×480, the 16:9
size of 480 lines, so that only the resolution changes)."""

_TEXT = re.compile(
    r"(?P<width>\d{1,5})x(?P<height>\d{1,5})"
    r"(?:@(?P<hfov>\d+(?:\.\d+)?))?"
    r"(?:/(?P<pitch>[+-]?\d+(?:\.\d+)?))?"
)
SYNTAX = "a preset or WIDTHxHEIGHT[@HFOV][/PITCH], e.g. 640x640@110 or 1920x1080@90/-45"


def body_camera(body: str, family_camera: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return a family's own camera: the one it fixes, else the default for its ``body``."""
    base = asdict(CameraSpec(pitch=BODY_PITCH.get(body, 0.0)))
    return base | dict(family_camera or {})


def parse_camera(text: str, where: str = "--camera") -> dict[str, float]:
    """Return the camera fields ``text`` gives (a preset's or ``WxH[@HFOV][/PITCH]``'s).

    Raises:
        ParameterError: neither a preset nor the syntax, naming both.
    """
    name = text.strip().lower()
    if name in PRESETS:
        return dict(PRESETS[name])
    found = _TEXT.fullmatch(name)
    if found is None:
        presets = ", ".join(PRESETS)
        raise ParameterError(f"{where}: {text!r} is not {SYNTAX}; presets: {presets}")
    fields = {key: float(value) for key, value in found.groupdict().items() if value is not None}
    return {k: int(v) if k in ("width", "height") else v for k, v in fields.items()}


def run_camera(
    given: str | Mapping[str, Any], base: Mapping[str, Any], where: str = "--camera"
) -> dict[str, Any]:
    """Return the camera a run asks for: ``given`` (text or fields) over the family's ``base``.

    Raises:
        ParameterError: text that names no camera, an unknown field, or a camera out of range
            (size 8..4096 pixels a side, field of view 10..170°, pitch -90..90°).
    """
    fields = parse_camera(given, where) if isinstance(given, str) else dict(given)
    unknown = set(fields) - set(CameraSpec.__dataclass_fields__)
    if unknown:
        allowed = ", ".join(CameraSpec.__dataclass_fields__)
        raise ParameterError(
            f"{where}: unknown camera fields {sorted(unknown)}; allowed: {allowed}"
        )
    try:
        return asdict(CameraSpec(**(dict(base) | fields)))
    except ParameterError as error:
        raise ParameterError(f"{where}: {error}") from None
