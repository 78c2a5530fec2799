"""Talking to models: one OpenAI-compatible client and its cache (model use: report/usage.py).

The names below load on first use (PEP 562): the client imports the OpenAI SDK, a third of a
second that a report reading only ``sortie.models.retry.ErrorKind`` should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sortie.models.cache import CachedResponse, ResponseCache, request_key
    from sortie.models.client import ModelCallError, ModelClient, ReplayMissError, Reply
    from sortie.models.config import ModelConfig
    from sortie.models.images import data_url, image_part

_HOMES = {
    "CachedResponse": "cache",
    "ResponseCache": "cache",
    "request_key": "cache",
    "ModelCallError": "client",
    "ModelClient": "client",
    "ReplayMissError": "client",
    "Reply": "client",
    "ModelConfig": "config",
    "data_url": "images",
    "image_part": "images",
}

__all__ = [
    "CachedResponse",
    "ModelCallError",
    "ModelClient",
    "ModelConfig",
    "Reply",
    "ReplayMissError",
    "ResponseCache",
    "data_url",
    "image_part",
    "request_key",
]


def __getattr__(name: str) -> Any:
    """Return one of the package's names, importing its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sortie.models' has no attribute {name!r}")
    return getattr(importlib.import_module(f"sortie.models.{home}"), name)
