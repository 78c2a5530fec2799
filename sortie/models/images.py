"""Images for model requests: resized, encoded as PNG or JPEG, wrapped in data URLs."""

from __future__ import annotations

import base64
import io

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from sortie.core.errors import ParameterError

FORMATS = {"png": "PNG", "jpeg": "JPEG", "jpg": "JPEG"}


def data_url(
    rgb: NDArray[np.uint8], resolution: int = 0, fmt: str = "png", quality: int = 90
) -> str:
    """Return ``rgb`` as a ``data:image/...;base64,`` URL, its longer side ``resolution`` px.

    ``resolution`` 0 keeps the image's own size. Encoding is deterministic for a given Pillow
    version (no timestamps), so the same frame gives the same URL and the same cache key.
    """
    kind = FORMATS.get(fmt.lower())
    if kind is None:
        raise ParameterError(f"image format {fmt!r} is not one of: png, jpeg")
    image = resized(Image.fromarray(np.ascontiguousarray(rgb[..., :3])), resolution)
    buffer = io.BytesIO()
    image.save(buffer, kind, **({"quality": quality} if kind == "JPEG" else {"optimize": False}))
    mime = "image/png" if kind == "PNG" else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


def resized(image: Image.Image, resolution: int) -> Image.Image:
    """Return ``image`` scaled so its longer side is ``resolution`` pixels (0: unchanged)."""
    if resolution <= 0 or max(image.size) == resolution:
        return image
    scale = resolution / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.BILINEAR)


def image_part(rgb: NDArray[np.uint8], resolution: int = 0, fmt: str = "png") -> dict[str, object]:
    """Return a chat message content part holding ``rgb``."""
    return {"type": "image_url", "image_url": {"url": data_url(rgb, resolution, fmt)}}
