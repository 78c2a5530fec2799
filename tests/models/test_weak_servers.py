"""Servers that make a run look normal when it is not: a dropped system prompt, any name."""

import warnings

import pytest

from sortie.models import ModelClient, ModelConfig
from sortie.models.client import ModelWarning, fold_system
from sortie.testing.model_server import ModelServer
from sortie.testing.server_quirks import QUIRKS
from tests.models.conftest import FAST, secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")

SYSTEM = "You plan household subtasks. " * 60
"""A system prompt of about 450 tokens, as the agents' are: the actions, skills, schema."""
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Round 1."}]


def client(double: ModelServer, **args: str) -> ModelClient:
    """Return a client of ``double`` with the test's quick settings."""
    settings = {"model": "m", "base_url": double.base_url, **FAST, **args}
    return ModelClient(ModelConfig.from_args(settings))


def test_a_template_that_drops_the_system_prompt_is_noticed_once():
    """Prompt tokens counted without the system message: one ModelWarning saying system=user."""
    with ModelServer(lambda m: "ok", drops_system=True) as server:
        asking = client(server)
        with pytest.warns(ModelWarning, match="try -a system=user"):
            asking.ask(MESSAGES)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asking.ask(MESSAGES)  # once is enough


def test_a_dropped_list_turn_with_system_user_set_is_not_blamed_on_the_system_message():
    """With system=user already set, the warning names list content, not system=user."""
    turn = [{"type": "text", "text": "Round 1."}]
    with ModelServer(lambda m: "ok", quirks=QUIRKS["llama-cpp-python"]) as server:
        with pytest.warns(ModelWarning, match="list.*observation=text") as caught:
            client(server, system="user").ask([MESSAGES[0], {"role": "user", "content": turn}])
    assert "try -a system=user" not in str(caught[0].message)


def test_system_user_folds_the_system_prompt_into_the_first_user_message():
    """-a system=user: no system message is sent, its text leads the user's; no warning."""
    with ModelServer(lambda m: "ok", drops_system=True) as server:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client(server, system="user").ask(MESSAGES)
        sent = server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert sent[0]["content"].startswith(SYSTEM.strip()) and sent[0]["content"].endswith("Round 1.")


def test_folding_keeps_a_user_message_with_images_whole():
    """A user message of parts gets the system text as its first part."""
    image = {"type": "image_url", "image_url": {"url": "data:,"}}
    folded = fold_system([MESSAGES[0], {"role": "user", "content": [image]}])
    assert folded == [{"role": "user", "content": [{"type": "text", "text": SYSTEM}, image]}]


def test_a_server_that_answers_any_name_warns_of_a_name_it_does_not_list():
    """llama.cpp lists its alias but answers any name: the run would go under the wrong name."""
    with ModelServer(lambda m: "ok", models=("gemma3-270m",), any_model=True) as server:
        with pytest.warns(UserWarning, match="not among the models the server"):
            client(server, model="gemma-3-270m").preflight()


def test_ollamas_short_counts_of_a_cached_prompt_are_no_alarm():
    """Ollama leaves a cached prefix out of its count: asking twice warns of nothing."""
    with ModelServer(lambda m: "ok", quirks=QUIRKS["ollama"]) as double:
        asking = client(double, server="ollama")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asking.ask(MESSAGES)
            asking.ask([*MESSAGES[:1], {"role": "user", "content": "Round 2."}])
        assert double.count == 2
