"""What travels between processes: images as base64 PNG (bit for bit), and message errors.

The remote agents' wire (``sortie.remote.wire``) and a family's own part of an observation
message (``sortie.core.vocabulary.ObservationPart``) carry images in this form, so a family
can declare its part without importing the layers that serve it.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from PIL import Image as PILImage
from pydantic import BaseModel, ConfigDict

from sortie.core.errors import SortieError


class WireError(SortieError):
    """A message broke the wire format: ``status`` is the HTTP status it is answered with."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message = status, code, message


class MessageModel(BaseModel):
    """A message record: unknown fields refused, no NaN or infinity, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Image(MessageModel):
    """One image as a base64 PNG.

    ``uint8`` images are (H, W), (H, W, 3) or (H, W, 4) PNGs as they are. ``float32`` (depth,
    metres) and ``int32`` (semantic ids) images are (H, W): each value's four little-endian
    bytes are the RGBA channels of the PNG, so they travel bit for bit.
    """

    encoding: Literal["png"] = "png"
    dtype: Literal["uint8", "float32", "int32"]
    shape: tuple[int, ...]
    data: str


def encode_image(array: NDArray[Any]) -> Image:
    """Return ``array`` (uint8, float32 or int32) as a wire image."""
    dtype = str(array.dtype)
    if dtype not in ("uint8", "float32", "int32"):
        raise WireError(422, "invalid", f"image of dtype {dtype}; allowed: uint8, float32, int32")
    pixels = array if dtype == "uint8" else _as_rgba(array)
    buffer = io.BytesIO()
    PILImage.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="PNG", compress_level=1)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return Image(dtype=dtype, shape=tuple(array.shape), data=data)  # type: ignore[arg-type]


MAX_PIXELS = 4096 * 4096
"""Largest image (width × height) a message may carry; a PNG is checked before it is unpacked."""
MAX_IMAGES = 8
"""Most images one message may carry (a household observation has seven: three frames and
four views)."""
MAX_MESSAGE_PIXELS = 4096 * 4096
"""Most pixels all of one message's images may declare together, checked before any is
unpacked: decoding costs about four bytes a pixel, so a message stays under about 70 MB."""


def check_image_budget(images: list[Image]) -> None:
    """Raise ValueError if ``images`` are too many or declare too many pixels together."""
    if len(images) > MAX_IMAGES:
        raise ValueError(f"{len(images)} images; at most {MAX_IMAGES} a message")
    pixels = sum(
        max(image.shape[0], 0) * max(image.shape[1], 0) for image in images if len(image.shape) > 1
    )
    if pixels > MAX_MESSAGE_PIXELS:
        raise ValueError(f"images of {pixels} pixels together; at most {MAX_MESSAGE_PIXELS}")


def _uint8_modes(shape: tuple[int, ...]) -> tuple[str, ...]:
    """Return the PNG modes a uint8 image of ``shape`` may come in (none: a shape not allowed)."""
    if len(shape) == 2:
        return ("L",)
    if len(shape) == 3:
        return {3: ("RGB",), 4: ("RGBA",)}.get(shape[2], ())
    return ()


def _depth_modes(shape: tuple[int, ...]) -> tuple[str, ...]:
    """Return the PNG modes of a float32 or int32 image of ``shape``: RGBA, and only (H, W)."""
    return ("RGBA",) if len(shape) == 2 else ()


def decode_image(image: Image) -> NDArray[Any]:
    """Return the array of a wire image; raise WireError (422) if it is not what it says."""
    try:
        png = PILImage.open(io.BytesIO(base64.b64decode(image.data, validate=True)))
        _check_header(png, image)
        pixels = np.asarray(png)
    except (binascii.Error, OSError, ValueError, PILImage.DecompressionBombError) as error:
        raise WireError(422, "invalid", f"image: not a base64 PNG ({error})") from None
    if image.dtype != "uint8":
        pixels = _from_rgba(pixels, image.dtype)
    if pixels.shape != tuple(image.shape):
        raise WireError(
            422, "invalid", f"image: PNG holds shape {pixels.shape}, message says {image.shape}"
        )
    return pixels


def _check_header(png: PILImage.Image, image: Image) -> None:
    """Refuse a PNG whose size or mode differs from the message's, before unpacking it."""
    modes = _uint8_modes(image.shape) if image.dtype == "uint8" else _depth_modes(image.shape)
    if not modes:
        allowed = "(H, W), (H, W, 3) or (H, W, 4)" if image.dtype == "uint8" else "(H, W)"
        raise WireError(
            422, "invalid", f"image: {image.dtype} of shape {list(image.shape)}; allowed: {allowed}"
        )
    height, width = image.shape[0], image.shape[1]
    if width * height > MAX_PIXELS:
        raise WireError(422, "invalid", f"image of {width}×{height} pixels; at most {MAX_PIXELS}")
    if png.size != (width, height):
        raise WireError(
            422,
            "invalid",
            f"image: PNG is {png.size[0]}×{png.size[1]}, message says {width}×{height}",
        )
    if png.mode not in modes:
        raise WireError(
            422, "invalid", f"image: PNG mode {png.mode} for {image.dtype} {image.shape}"
        )


def _as_rgba(array: NDArray[Any]) -> NDArray[np.uint8]:
    if array.ndim != 2:
        raise WireError(422, "invalid", f"{array.dtype} image of shape {array.shape}; need (H, W)")
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(little).view(np.uint8).reshape(*array.shape, 4)


def _from_rgba(pixels: NDArray[Any], dtype: str) -> NDArray[Any]:
    if pixels.ndim != 3 or pixels.shape[2] != 4 or pixels.dtype != np.uint8:
        raise WireError(422, "invalid", f"{dtype} image: the PNG is not 8-bit RGBA")
    raw = np.ascontiguousarray(pixels).view(np.dtype(dtype).newbyteorder("<"))
    return raw.reshape(pixels.shape[:2]).astype(dtype)
