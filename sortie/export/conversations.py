"""Chat requests in TRL's conversational form: ``messages`` with image parts, and ``images``.

The model client's requests use the OpenAI form (an image is an ``image_url`` part holding a
data URL). TRL's vision datasets put ``{"type": "image"}`` where each image goes and the
images, in order, in a column of their own. A dataset's messages must share one shape for
Arrow: with images every content is a list of parts, without them every content is a string.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

from sortie.core.errors import ConfigError

Message = dict[str, Any]
_DATA_URL = "data:image/"


def trl_messages(messages: list[Message], with_images: bool) -> tuple[list[Message], list[Any]]:
    """Return ``messages`` in TRL's form, and the images they hold in order (PIL images)."""
    converted: list[Message] = []
    images: list[Any] = []
    for message in messages:
        content = message["content"]
        if not with_images:
            converted.append({"role": message["role"], "content": _as_text(content)})
            continue
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        converted.append({"role": message["role"], "content": [_part(p, images) for p in parts]})
    return converted, images


def answer_message(text: str, with_images: bool) -> Message:
    """Return an assistant message in the dataset's shape (parts with images, else a string)."""
    content: Any = [{"type": "text", "text": text}] if with_images else text
    return {"role": "assistant", "content": content}


def _part(part: Message, images: list[Any]) -> Message:
    if part.get("type") == "text":
        return {"type": "text", "text": str(part["text"])}
    if part.get("type") == "image_url":
        images.append(decoded_image(str(part["image_url"]["url"])))
        return {"type": "image", "text": None}
    raise ConfigError(f"message part of type {part.get('type')!r}: expected text or image_url")


def _as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if any(part.get("type") != "text" for part in content):
        raise ConfigError("a request with images cannot be written as text (use images=true)")
    return "\n".join(str(part["text"]) for part in content)


def decoded_image(url: str) -> Image.Image:
    """Return the image of a ``data:image/...;base64,`` URL."""
    if not url.startswith(_DATA_URL) or ";base64," not in url:
        raise ConfigError(f"image URL {url[:40]!r}...: expected a base64 data URL")
    data = base64.b64decode(url.split(";base64,", 1)[1])
    image = Image.open(io.BytesIO(data))
    image.load()
    return image
