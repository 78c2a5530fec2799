import base64
import io

import numpy as np
from PIL import Image

from sortie.models import CachedResponse, ResponseCache, data_url, request_key


def test_request_key_is_canonical():
    """Key order does not change the key; any content change does."""
    assert request_key({"a": 1, "b": [1, 2]}) == request_key({"b": [1, 2], "a": 1})
    assert request_key({"a": 1}) != request_key({"a": 1.5})


def test_cache_keeps_the_first_answer(tmp_path):
    """A stored answer survives reopening; a second put under the same key does not replace it."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", CachedResponse("m", "first", 3, 4, 0.5, 2))
    cache.put("k", CachedResponse("m", "second", 3, 4, 0.1))
    cache.close()
    assert ResponseCache(tmp_path / "c.sqlite").get("k") == CachedResponse("m", "first", 3, 4,
                                                                           0.5, 2)


def test_images_are_resized_and_deterministic():
    """The longer side becomes the resolution, and the same frame gives the same URL."""
    rgb = np.random.default_rng(0).integers(0, 255, (60, 120, 3), dtype=np.uint8)
    url = data_url(rgb, 64)
    assert url == data_url(rgb, 64) and url.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert image.size == (64, 32)
    assert data_url(rgb, 0, "jpeg").startswith("data:image/jpeg;base64,")
