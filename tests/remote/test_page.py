"""The play page's key presses: bad or stale ones are refused with a 4xx, never a step."""

import json

import pytest

from sortie.core.actions import Move
from sortie.core.observation import Frames, MissionObservation
from sortie.remote.human import Desk
from sortie.remote.page import press
from sortie.remote.wire import WireError


@pytest.fixture
def desk(rescue_start):
    """A desk showing the rescue brief, with no step waiting yet."""
    desk = Desk()
    desk.begin(rescue_start[0])
    return desk


def test_a_key_press_while_no_step_waits_is_a_409(desk):
    """Before the episode asks for a key, a press is refused as busy."""
    with pytest.raises(WireError) as caught:
        press(desk, json.dumps({"key": "ArrowUp", "seq": desk.state()["seq"]}).encode())
    assert (caught.value.status, caught.value.code) == (409, "busy")


@pytest.mark.parametrize(
    "body",
    [b"{", b'{"key": "ArrowUp"}', b'{"key": 3, "seq": 1}', b"[" * 16_000 + b"]" * 16_000],
)
def test_a_malformed_key_press_is_a_400(desk, body):
    """A body that is not JSON, lacks seq, has a key that is not text, or nests deep is a 400."""
    with pytest.raises(WireError) as caught:
        press(desk, body)
    assert caught.value.status == 400


def test_a_key_press_on_the_view_that_waits_is_the_step(desk):
    """A press naming the waiting view's seq is the action that ask() returns."""
    import threading

    got = []
    observation = MissionObservation(Frames(), carrying=False, time_left=10.0)
    asking = threading.Thread(target=lambda: got.append(desk.ask(observation)))
    asking.start()
    for _ in range(100):
        if desk.state()["phase"] == "waiting":
            break
        threading.Event().wait(0.01)
    press(desk, json.dumps({"key": "ArrowLeft", "seq": desk.state()["seq"]}).encode())
    asking.join(timeout=5)
    assert got == [Move(15.0, 0.0)]


def _get(url: str, host: str) -> int:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.putrequest("GET", "/play/state", skip_host=True)
    connection.putheader("Host", host)
    connection.endheaders()
    status = connection.getresponse().status
    connection.close()
    return status


def test_every_request_with_a_foreign_host_is_refused(desk):
    """GET /play/state with Host evil.example (a DNS-rebinding read) is a 403; loopback is not."""
    from sortie.remote.page import PageServer

    server = PageServer(desk, port=0).start()
    try:
        port = server.url.rsplit(":", 1)[1].strip("/")
        assert _get(server.url, "evil.example") == 403
        assert _get(server.url, f"evil.example:{port}") == 403
        assert _get(server.url, f"127.0.0.1:{port}") == 200
        assert _get(server.url, f"localhost:{port}") == 200
    finally:
        server.stop()


def test_a_client_that_hangs_up_leaves_no_traceback(capfd):
    """A dropped connection is not reported; an error in a handler still is (and is a 500)."""
    import http.client
    import socket

    from sortie.remote.bounded import BoundedServer

    def broken(request):
        raise ValueError("a real bug")

    server = BoundedServer(broken, "127.0.0.1", 0, 1024).start()
    try:
        host, port = server.address
        with socket.create_connection((host, port)) as hung_up:  # half a body, then gone
            hung_up.sendall(b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nab")
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request("GET", "/")
        assert connection.getresponse().status == 500
        connection.close()
    finally:
        server.stop()
    printed = capfd.readouterr().err
    assert "a real bug" in printed and "ConnectionError" not in printed


def test_a_chunked_key_press_over_the_cap_is_a_413_before_it_ends(desk):
    """A key press sent in chunks past 16 KiB is refused while it is still being sent."""
    from sortie.remote.page import MAX_KEY_BYTES, PageServer

    from .conftest import chunked_post

    server = PageServer(desk, port=0).start()
    try:
        body = b"x" * 3 * MAX_KEY_BYTES
        status, answer = chunked_post(server.http.address, "/play/key", body, end=False)
        assert status == 413 and b"too_large" in answer
    finally:
        server.stop()


def test_a_chunked_key_press_under_the_cap_is_read(desk):
    """A key press sent in chunks reaches the desk (here: busy, as no step waits)."""
    from sortie.remote.page import PageServer

    from .conftest import chunked_post

    server = PageServer(desk, port=0).start()
    try:
        body = json.dumps({"key": "ArrowUp", "seq": desk.state()["seq"]}).encode()
        status, answer = chunked_post(server.http.address, "/play/key", body)
        assert status == 409 and b"busy" in answer
    finally:
        server.stop()


def _post(url: str, headers: dict) -> int:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("POST", "/play/key", body=b'{"key": "x", "seq": 0}', headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_key_press_from_another_site_or_not_json_is_refused(desk):
    """Another site's Origin is a 403, a text/plain body a 415; the page's own press is read."""
    from sortie.remote.page import PageServer

    server = PageServer(desk, port=0).start()
    try:
        json_body = {"Content-Type": "application/json"}
        assert _post(server.url, json_body | {"Origin": "http://evil.example"}) == 403
        assert _post(server.url, {"Content-Type": "text/plain"}) == 415
        own = server.url.rstrip("/")
        assert _post(server.url, json_body | {"Origin": own}) == 409  # read: no step waits
    finally:
        server.stop()


def test_a_deeply_nested_subtask_is_a_400(desk):
    """16 KB of nested lists is refused as malformed, not raised as a RecursionError."""
    from sortie.remote.page import choose

    with pytest.raises(WireError) as caught:
        choose(desk, b"[" * 16_000 + b"]" * 16_000)
    assert caught.value.status == 400


def test_the_page_shows_the_briefs_goal_images(rescue_start):
    """A rescue brief's reference, stretcher and ambulance views reach the page as PNGs."""
    import base64
    import io

    from PIL import Image

    desk = Desk()
    brief = rescue_start[0]
    desk.begin(brief)
    goals = desk.view["goals"]
    assert set(goals) == set(brief.images) and "reference" in goals
    shown = Image.open(io.BytesIO(base64.b64decode(goals["reference"])))
    assert shown.size == brief.images["reference"].shape[1::-1]
