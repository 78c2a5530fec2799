import base64
import io
import sqlite3

import numpy as np
from PIL import Image

from sortie.models import CachedResponse, ResponseCache, data_url, request_key
from sortie.models.cache import server_address

URL = "http://127.0.0.1:8000/v1"


def test_request_key_is_canonical():
    """Key order does not change the key; any content change does."""
    assert request_key({"a": 1, "b": [1, 2]}, URL) == request_key({"b": [1, 2], "a": 1}, URL)
    assert request_key({"a": 1}, URL) != request_key({"a": 1.5}, URL)


def test_request_key_depends_on_the_server():
    """The same request to two servers has two keys; one server spelt two ways has one."""
    request = {"model": "m", "messages": []}
    assert request_key(request, URL) != request_key(request, "http://127.0.0.1:8001/v1")
    assert request_key(request, URL) == request_key(request, "HTTP://u:pw@127.0.0.1:8000/v1/")


def test_server_address_drops_what_does_not_name_the_server():
    """Case, user:password, a default port and a trailing slash leave the address unchanged."""
    assert server_address("HTTPS://alice:pw@API.Example.com:443/v1/") == (
        "https://api.example.com/v1"
    )
    assert server_address("http://[::1]:8000/v1") == "http://[::1]:8000/v1"


def test_a_cache_file_from_before_malformed_answers_gets_the_column(tmp_path):
    """A cache written without the malformed column is opened, extended and written to."""
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, text "
            "TEXT NOT NULL, rejected TEXT, tokens_in INTEGER NOT NULL, tokens_out "
            "INTEGER NOT NULL, latency REAL NOT NULL, attempts INTEGER NOT NULL, "
            "created REAL NOT NULL)"
        )
        db.execute("INSERT INTO responses VALUES ('old', 'm', 'hi', NULL, 1, 2, 0.5, 1, 0)")
    db.close()
    cache = ResponseCache(path)
    cache.put("new", CachedResponse("m", "{}", 1, 1, 0.1, malformed="'choices' is a str"))
    assert cache.get("old") == CachedResponse("m", "hi", 1, 2, 0.5, 1)
    assert cache.get("new") is not None and cache.get("new").malformed == "'choices' is a str"


def test_cache_keeps_the_first_answer(tmp_path):
    """A stored answer survives reopening; a second put under the same key does not replace it."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", CachedResponse("m", "first", 3, 4, 0.5, 2))
    cache.put("k", CachedResponse("m", "second", 3, 4, 0.1))
    cache.close()
    assert ResponseCache(tmp_path / "c.sqlite").get("k") == CachedResponse(
        "m", "first", 3, 4, 0.5, 2
    )


def test_images_are_resized_and_deterministic():
    """The longer side becomes the resolution, and the same frame gives the same URL."""
    rgb = np.random.default_rng(0).integers(0, 255, (60, 120, 3), dtype=np.uint8)
    url = data_url(rgb, 64)
    assert url == data_url(rgb, 64) and url.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert image.size == (64, 32)
    assert data_url(rgb, 0, "jpeg").startswith("data:image/jpeg;base64,")
