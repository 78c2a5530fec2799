"""Talking to models: one OpenAI-compatible client and its cache (model use: report/usage.py)."""

from sortie.models.cache import CachedResponse, ResponseCache, request_key
from sortie.models.client import ModelCallError, ModelClient, ReplayMissError, Reply
from sortie.models.config import ModelConfig
from sortie.models.images import data_url, image_part

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
