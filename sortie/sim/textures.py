"""Textures drawn with Pillow: licence plates, shop signs, numbers, patterns.

Text uses the FreeType font that Pillow itself ships (``ImageFont.load_default(size)``), so
no system font is needed and every machine draws the same pixels.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

from sortie.sim.mesh import Color


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def text_texture(
    text: str,
    width: int = 256,
    height: int = 64,
    ink: Color = (20, 20, 20),
    paper: Color = (245, 245, 245),
    border: Color | None = None,
) -> NDArray[np.uint8]:
    """Return an RGB image of ``text`` centred and as large as fits, (height, width, 3).

    Each call returns an image of its own (read-only): a scene's texture atlas holds one copy
    per image, so sharing one between two signs would move the other textures in it.
    """
    edge = None if border is None else tuple(border)
    array = _drawn_text(text, width, height, tuple(ink), tuple(paper), edge)
    copy = array.copy()
    copy.flags.writeable = False
    return copy


@lru_cache(maxsize=256)
def _drawn_text(
    text: str, width: int, height: int, ink: Color, paper: Color, border: Color | None
) -> NDArray[np.uint8]:
    """Return ``text_texture``'s image, kept per process: house numbers, shop names recur."""
    image = Image.new("RGB", (width, height), paper)
    draw = ImageDraw.Draw(image)
    pad = max(2, height // 10)
    if border is not None:
        draw.rectangle([0, 0, width - 1, height - 1], outline=border, width=pad // 2 + 1)
    size, fitted = height - 2 * pad, None
    while size > 6:
        left, top, right, bottom = draw.textbbox((0, 0), text, font=_font(size))
        if right - left <= width - 2 * pad and bottom - top <= height - 2 * pad:
            fitted = (left, top, right, bottom)  # the box at the size drawn: not measured again
            break
        size -= 2
    font = _font(size)
    left, top, right, bottom = fitted or draw.textbbox((0, 0), text, font=font)
    origin = ((width - (right - left)) / 2 - left, (height - (bottom - top)) / 2 - top)
    draw.text(origin, text, fill=ink, font=font)
    array = np.asarray(image, dtype=np.uint8).copy()
    array.flags.writeable = False
    return array


def stripes_texture(
    colors: tuple[Color, Color], width: int = 64, height: int = 64, bands: int = 8
) -> NDArray[np.uint8]:
    """Return horizontal stripes alternating two colours (awnings, barriers, crossings)."""
    rows = (np.arange(height) * bands // height) % 2
    palette = np.asarray(colors, dtype=np.uint8)
    return np.repeat(palette[rows][:, None, :], width, axis=1)
