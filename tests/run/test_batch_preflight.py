"""A stored run checks its model server before any episode (``SupportsPreflight``)."""

import pytest

from sortie.core.errors import ConfigError
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from sortie.testing.model_server import ModelServer
from tests.conftest import run_stored
from tests.models.conftest import FAST, secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")


def request(smoke3, tmp_path, url: str) -> RunRequest:
    args = {"model": "test-vlm", "base_url": url, **FAST}
    return RunRequest(
        (str(smoke3),), "mllm-rescue", agent_args=args, store=tmp_path / "s.db", run_id="r"
    )


def stored(tmp_path) -> list:
    with Store(tmp_path / "s.db") as store:
        return store.episodes("r")


def test_a_run_against_a_dead_port_stops_before_any_episode(smoke3, tmp_path):
    """Nothing listening: the run fails at once, naming host:port, with nothing stored."""
    with ModelServer(lambda m: "{}") as server:
        url = server.base_url
    host_port = url.split("//")[1].split("/")[0]
    with pytest.raises(ConfigError, match=rf"unreachable at .*\({host_port}\)"):
        run_stored(request(smoke3, tmp_path, url))
    assert stored(tmp_path) == [] and not list(tmp_path.rglob("*.jsonl"))


def test_a_run_with_an_unknown_model_names_the_served_ones(smoke3, tmp_path):
    """A model the server does not serve: the run fails naming it and listing the served ones."""
    with ModelServer(lambda m: "{}", models=("qwen-7b", "llava")) as server:
        with pytest.raises(ConfigError, match=r"'test-vlm' unknown.*serves: llava, qwen-7b"):
            run_stored(request(smoke3, tmp_path, server.base_url))
        assert server.count == 1  # the one-token test call; no episode asked anything
    assert stored(tmp_path) == []
