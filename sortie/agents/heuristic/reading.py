"""Reading text off the RGB image with RapidOCR: plates, numbers and words.

A crop around what must be read is enlarged (OCR models want characters ~30 px high) and
turned so its long side lies across and read both ways up, because a roof plate or stencil
faces whichever way its object was parked. Each reading is scored by how well it fits what
was asked (a plate has the form ``AB 123``), and the best one wins. The OCR engine (the
``ocr`` extra) is loaded once per process, on first use; ``require_ocr`` checks that it is
installed without loading it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from sortie.core.errors import MissingExtraError

PLATE = re.compile(r"^[A-Z]{2}\d{3}$")
_AS_LETTER = str.maketrans("0184526", "OIBASZG")
_AS_DIGIT = str.maketrans("OQDIJLZSBGAT", "000111258847")
TARGET_HEIGHT = 64
"""Pixels the shorter side of a crop is enlarged to before reading."""
MAX_SIDE = 384
"""Pixels the longer side may reach: text detection's cost grows with the area."""
OCR_MODULE = "rapidocr_onnxruntime"
MISSING_OCR = "agent 'heuristic' reads text with OCR: pip install 'sortie[ocr]'"


def require_ocr() -> None:
    """Raise MissingExtraError unless the OCR engine is installed (nothing is loaded)."""
    if find_spec(OCR_MODULE) is None:
        raise MissingExtraError(MISSING_OCR)


@dataclass(frozen=True, slots=True)
class Reading:
    """What OCR made of a crop: the text as read, the answer drawn from it and a score."""

    raw: str
    answer: str
    score: float


class TextReader:
    """Reads plates, numbers and words from image crops (one shared RapidOCR engine)."""

    _engine: ClassVar[Any] = None

    @classmethod
    def engine(cls) -> Any:
        """Return the OCR engine, loading it on first use (its models ship with the package)."""
        if cls._engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as error:
                raise MissingExtraError(f"{MISSING_OCR} ({error})") from error
            cls._engine = RapidOCR()
        return cls._engine

    def read(self, crop: NDArray[np.uint8], want: str) -> Reading | None:
        """Return the best reading of ``crop`` for ``want`` (plate, number, text), or None.

        The crop is turned so its long side lies across, then read both ways up. A plate
        crop is one line of text, so only the recogniser runs (fast); other crops go through
        text detection first.
        """
        if crop.ndim != 3 or min(crop.shape[:2]) < 4:
            return None
        across = np.rot90(crop) if crop.shape[0] > crop.shape[1] else crop
        big = enlarge(np.ascontiguousarray(across))
        found = [
            _score(self._lines(np.ascontiguousarray(np.rot90(big, k)), want == "plate"), want)
            for k in (0, 2)
        ]
        readings = [r for r in found if r is not None]
        return max(readings, key=lambda r: r.score) if readings else None

    def _lines(self, image: NDArray[np.uint8], one_line: bool) -> list[tuple[str, float]]:
        """Return the text found, left to right, with confidences."""
        engine = self.engine()  # a missing extra is an error, not a failed read
        try:
            result, _ = engine(image, use_det=not one_line, use_cls=False)
        except Exception:  # noqa: BLE001 - a failed read is no reading, never a crash
            return []
        if one_line:
            return [(str(text), float(conf)) for text, conf in result or [] if text]
        boxes = sorted(result or [], key=lambda r: min(p[0] for p in r[0]))
        return [(str(text), float(conf)) for _, text, conf in boxes]


def enlarge(crop: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Return the crop scaled so its shorter side is TARGET_HEIGHT (at most 6×, MAX_SIDE px)."""
    scale = min(6.0, TARGET_HEIGHT / min(crop.shape[:2]), MAX_SIDE / max(crop.shape[:2]))
    if scale <= 1.0:
        return crop
    size = (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale)))
    return np.asarray(Image.fromarray(crop).resize(size, Image.Resampling.BICUBIC))


def _score(lines: list[tuple[str, float]], want: str) -> Reading | None:
    if not lines:
        return None
    raw = " ".join(text for text, _ in lines)
    confidence = float(np.mean([conf for _, conf in lines]))
    if want == "plate":
        return _plate(raw, confidence)
    if want == "number":
        return _number(lines)
    return _words(lines)


def normalise_plate(raw: str) -> str | None:
    """Return ``AB 123`` from an OCR reading of a plate (digits and letters fixed by place)."""
    chars = re.sub(r"[^A-Z0-9]", "", raw.upper())
    for start in range(max(len(chars) - 4, 0)):
        piece = chars[start : start + 5]
        fixed = piece[:2].translate(_AS_LETTER) + piece[2:].translate(_AS_DIGIT)
        if PLATE.match(fixed):
            return f"{fixed[:2]} {fixed[2:]}"
    return None


def _plate(raw: str, confidence: float) -> Reading | None:
    plate = normalise_plate(raw)
    if plate is None:
        return None
    exact = re.sub(r"[^A-Z0-9]", "", raw.upper()) == plate.replace(" ", "")
    return Reading(raw, plate, confidence + (0.2 if exact else 0.0))


def _number(lines: list[tuple[str, float]]) -> Reading | None:
    """Return the most confident run of digits (``P-03`` keeps its letter)."""
    best: Reading | None = None
    for text, conf in lines:
        for token in re.findall(r"[A-Z]-?\d+|\d+", text.upper()):
            score = conf + 0.05 * len(token)
            if best is None or score > best.score:
                best = Reading(text, token, score)
    return best


def _words(lines: list[tuple[str, float]]) -> Reading | None:
    """Return the most confident word of two or more letters (stencils, signs, names)."""
    best: Reading | None = None
    for text, conf in lines:
        for token in re.findall(r"[A-Za-z][A-Za-z0-9 &'-]+[A-Za-z0-9]", text):
            score = conf + 0.02 * min(len(token), 10)
            if best is None or score > best.score:
                best = Reading(text, token.upper(), score)
    return best


def plate_crop(
    rgb: NDArray[np.uint8], semantic: NDArray[np.int32], instance: int
) -> NDArray[np.uint8] | None:
    """Return a crop around the white plate on an object's pixels (None when none shows)."""
    white = (semantic == instance) & (rgb.min(axis=2) > 190)
    rows, cols = np.nonzero(white)
    if len(rows) < 6:
        return None
    box = (int(rows.min()), int(cols.min()), int(rows.max()) + 1, int(cols.max()) + 1)
    return crop_box(rgb, box, margin=0.4)


def crop_box(
    rgb: NDArray[np.uint8], box: tuple[int, int, int, int], margin: float = 0.15
) -> NDArray[np.uint8]:
    """Return the image inside ``box`` (row0, col0, row1, col1) grown by ``margin`` per side."""
    r0, c0, r1, c1 = box
    pad_r = max(2, round((r1 - r0) * margin))
    pad_c = max(2, round((c1 - c0) * margin))
    return rgb[max(0, r0 - pad_r) : r1 + pad_r, max(0, c0 - pad_c) : c1 + pad_c]
