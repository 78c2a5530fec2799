"""The preflight's content check: a chat template that drops part of a prompt stops the run."""

import dataclasses

import pytest

from sortie.core.errors import ConfigError
from sortie.models import ModelClient, ModelConfig
from sortie.models.adapt import Formats
from sortie.models.structured import extract_json
from sortie.testing.model_server import ModelServer
from sortie.testing.server_quirks import QUIRKS
from tests.models.conftest import FAST


def client(double, **args) -> ModelClient:
    settings = {"model": "m", "base_url": double.base_url, **FAST, "check_content": "true"}
    return ModelClient(ModelConfig.from_args({**settings, **args}))


def answer(messages) -> str:
    return "OK"


def test_a_server_that_drops_list_content_stops_the_run(secret):
    """llama-cpp-python's formats drop a list-of-parts user turn: one line naming the fix."""
    with ModelServer(answer, quirks=QUIRKS["llama-cpp-python"]) as server:
        with pytest.raises(ConfigError, match="drops messages whose content is a list.*--jinja"):
            client(server).preflight()


def test_list_content_dropped_is_caught_with_the_system_prompt_folded_too(secret):
    """With system=user the whole prompt is a list and vanishes: still caught."""
    with ModelServer(answer, quirks=QUIRKS["llama-cpp-python"]) as server:
        with pytest.raises(ConfigError, match="list of parts"):
            client(server, system="user").preflight()


def test_a_server_that_drops_the_system_message_stops_the_run(secret):
    """A template that drops system messages is caught; the fix named is system=user."""
    with ModelServer(answer, drops_system=True) as server:
        with pytest.raises(ConfigError, match="drops the system message.*-a system=user"):
            client(server).preflight()


def test_system_user_passes_a_server_that_drops_the_system_message(secret):
    """With the system prompt folded into the user turn, the dropping server is fine."""
    with ModelServer(answer, drops_system=True) as server:
        client(server, system="user").preflight()


@pytest.mark.parametrize("kind", ["vllm", "ollama", "llama-cpp", "openai-reasoning"])
def test_a_server_that_keeps_everything_passes(secret, kind):
    """Servers that keep list content and system messages pass (Ollama's cache included)."""
    with ModelServer(answer, quirks=QUIRKS[kind]) as server:
        client(server).preflight()


def test_a_server_that_reports_no_tokens_is_not_judged(secret):
    """Without prompt token counts nothing can be told, and nothing is claimed."""
    quirks = dataclasses.replace(QUIRKS["llama-cpp-python"], drops_list_content=False)
    with ModelServer(lambda m: "OK", quirks=quirks) as server:
        client(server).preflight()


def test_two_json_objects_give_the_first():
    """An answer holding two JSON objects is read as the first one."""
    assert extract_json('{"command": "left"} then {"command": "right"}') == {"command": "left"}


def test_a_weaker_format_is_tried_upward_again_after_enough_answers():
    """After enough answers in json_object, json_schema is tried again."""
    formats = Formats("json_schema", upward_after=2)
    formats.step_down("Answer")
    formats.answered("Answer")
    assert formats.mode("Answer") == "json_object"
    formats.answered("Answer")
    assert formats.mode("Answer") == "json_schema" and formats.mode("Other") == "json_schema"
