"""The pre-flight check: the server answers and serves the model, before any episode."""

import pytest

from sortie.core.errors import ConfigError
from sortie.models import ModelClient, ModelConfig
from sortie.testing.model_server import Fault, ModelServer
from tests.models.conftest import FAST


def client(url: str, model: str = "m", **args) -> ModelClient:
    return ModelClient(ModelConfig.from_args({"model": model, "base_url": url, **FAST, **args}))


def answer(messages) -> str:
    return "OK"


def dead_url() -> str:
    """Return the address of a server that has stopped (nothing listens on its port)."""
    with ModelServer(answer) as server:
        return server.base_url


def test_an_unreachable_server_is_named_with_host_and_port(secret):
    """Nothing listening: the error names the host:port and the usual causes."""
    url = dead_url()
    host_port = url.split("//")[1].split("/")[0]
    with pytest.raises(ConfigError, match=rf"unreachable at {url} \({host_port}\).*not running"):
        client(url).preflight()


def test_an_unknown_model_is_named_with_the_served_ones(secret):
    """A model the server neither lists nor answers: its name and the served names."""
    with ModelServer(answer, models=("qwen-7b", "llava")) as server:
        with pytest.raises(ConfigError, match=r"model 'qwn-7b' unknown.*serves: llava, qwen-7b"):
            client(server.base_url, "qwn-7b").preflight()


def test_a_listed_model_passes_without_a_chat_call(secret):
    """A model in the server's list passes on the list alone."""
    with ModelServer(answer, models=("m",)) as server:
        client(server.base_url).preflight()
        assert (server.listings, server.count) == (1, 0)


def test_a_server_answering_any_name_passes(secret):
    """llama.cpp lists its file name but answers any model name: one chat call confirms it.

    It passes with a warning that the name is not the one listed (the run goes under it).
    """
    with ModelServer(answer, models=("model.gguf",), any_model=True) as server:
        with pytest.warns(UserWarning, match="'local' is not among the models"):
            client(server.base_url, "local").preflight()
        assert server.count == 1 and server.requests[0]["max_tokens"] == 1


def test_a_server_without_a_model_list_is_asked_one_token(secret):
    """No /models endpoint (404): a one-token chat call decides, and it answered."""
    with ModelServer(answer) as server:
        client(server.base_url).preflight()
        assert (server.listings, server.count) == (0, 1)


def test_a_replay_contacts_nothing(secret, tmp_path):
    """Replaying needs no server: the check passes with nothing listening."""
    cache = tmp_path / "cache.sqlite"
    cache.touch()
    client(dead_url(), cache=str(cache), replay="true").preflight()


def test_a_refused_key_is_said_as_such(secret):
    """A 401 names the variable the key is read from, and not the key sent."""
    with ModelServer(answer, models=("m",), key="another-key") as server:
        with pytest.raises(ConfigError, match="refused the API key.*SORTIE_MODEL_API_KEY") as error:
            client(server.base_url).preflight()
    assert secret not in str(error.value)


@pytest.mark.parametrize("fault", [Fault.MALFORMED, Fault.DEEP])
def test_a_server_answering_something_else_than_json_is_a_clear_error(secret, fault):
    """HTTP 200 with a body that is not a chat completion: a ConfigError naming the server."""
    with ModelServer(answer) as server:
        server.inject(fault, times=5)
        with pytest.raises(ConfigError, match=r"not an OpenAI-compatible chat completion"):
            client(server.base_url).preflight()


def test_a_base_url_without_v1_is_named_as_the_likely_cause(secret):
    """404 on the model list and on a chat call: the URL, not the model name, is blamed."""
    with ModelServer(answer, models=("m",), routes="/v1") as server:
        bare = server.base_url.removesuffix("/v1")
        with pytest.raises(ConfigError, match=r"no OpenAI API at .*probably lacks /v1") as error:
            client(bare).preflight()
    assert "unknown" not in str(error.value)
