"""The client against each kind of server's protocol double: refusals read for their cause."""

import dataclasses

import pytest
from pydantic import BaseModel

from sortie.core.errors import ParameterError
from sortie.models import ModelCallError, ModelClient, ModelConfig
from sortie.models.config import SERVERS
from sortie.models.server_kinds import KINDS, server_kind
from sortie.testing.model_server import ModelServer
from sortie.testing.server_quirks import QUIRKS
from tests.models.conftest import FAST


class Answer(BaseModel):
    """The schema the tests ask for."""

    command: str


class Other(BaseModel):
    """A second kind of request."""

    target: str


SHORT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Go?"}]
LONG = [{"role": "system", "content": "word " * 5000}, {"role": "user", "content": "Go?"}]
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
TWO_IMAGES = [{"role": "user", "content": [{"type": "text", "text": "Go?"}, IMAGE, IMAGE]}]


def client(double, **args) -> ModelClient:
    return ModelClient(
        ModelConfig.from_args({"model": "m", "base_url": double.base_url, **FAST, **args})
    )


def answer(messages) -> str:
    return '{"command": "forward", "target": "door"}'


@pytest.mark.parametrize("kind", ["vllm", "llama-cpp", "llama-cpp-python", "gemini", "anthropic"])
def test_a_prompt_too_long_is_one_error_naming_the_fix(secret, kind):
    """Each server's context-overflow words end the answer at once, naming the context fix."""
    with ModelServer(answer, quirks=QUIRKS[kind]) as server:
        with pytest.raises(ModelCallError, match="does not fit the server's context.*-c N"):
            client(server).ask(LONG, Answer)
        assert server.count == 1  # no retry, no format stepped down


@pytest.mark.parametrize("kind", ["vllm", "llama-cpp"])
def test_too_many_images_is_one_error_naming_the_fix(secret, kind):
    """The image limit of vLLM and the 500 of llama.cpp without mmproj say how to serve images."""
    with ModelServer(answer, quirks=QUIRKS[kind]) as server:
        with pytest.raises(ModelCallError, match="refused the request's images.*mmproj") as error:
            client(server).ask(TWO_IMAGES, Answer)
        assert server.count == 1
    assert error.value.kind == "images"


def test_a_context_overflow_never_steps_the_format_down(secret):
    """After a prompt too long, the next request still asks in json_schema."""
    with ModelServer(answer, quirks=QUIRKS["vllm"]) as server:
        asker = client(server)
        with pytest.raises(ModelCallError):
            asker.ask(LONG, Answer)
        asker.ask(SHORT, Answer)
    assert server.requests[-1]["response_format"]["type"] == "json_schema"


def test_an_unexplained_400_is_not_a_format_refusal(secret):
    """A 400 naming no cause is an error as the server words it, not a silent step down."""
    quirks = dataclasses.replace(
        QUIRKS["openai-reasoning"],
        refuses=frozenset({"seed"}),
        errors={"parameter:seed": (400, {"error": {"message": "Bad request: seed."}})},
    )
    with ModelServer(answer, quirks=quirks) as server:
        with pytest.raises(ModelCallError, match="Bad request: seed") as error:
            client(server, options='{"seed": 1}').ask(SHORT, Answer)
        assert server.count == 1
    assert error.value.kind == "client"


def test_a_reasoning_model_gets_its_fields_renamed_and_left_out(secret):
    """max_tokens refused: renamed max_completion_tokens; temperature refused: left out."""
    with ModelServer(answer, quirks=QUIRKS["openai-reasoning"]) as server:
        asker = client(server)
        first = asker.ask(SHORT, Answer)
        second = asker.ask(SHORT, Answer)
    assert [c.error for c in first.calls] == ["parameter", "parameter", None]
    assert first.value is not None and len(second.calls) == 1
    sent = server.requests[-1]
    assert "max_tokens" not in sent and "temperature" not in sent
    assert sent["max_completion_tokens"] == 1024


def test_a_reasoning_model_set_up_front_is_asked_once(secret):
    """token_field and omit send what a reasoning model takes from the first request."""
    with ModelServer(answer, quirks=QUIRKS["openai-reasoning"]) as server:
        reply = client(server, token_field="max_completion_tokens", omit="temperature").ask(
            SHORT, Answer
        )
        assert server.count == 1
    assert reply.value is not None


def test_a_server_that_ignores_the_format_gets_the_schema_in_the_prompt(secret):
    """A server that reads no response_format (transformers serve) gets the schema in the prompt."""
    with ModelServer(answer, quirks=QUIRKS["transformers"]) as server:
        client(server, server="transformers").ask(SHORT, Answer)
    sent = server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert "JSON schema" in sent["messages"][0]["content"]


def test_a_server_that_reads_the_format_gets_no_schema_in_the_prompt(secret):
    """A server that constrains by json_schema is not told the schema twice."""
    with ModelServer(answer, quirks=QUIRKS["vllm"]) as server:
        client(server, server="vllm").ask(SHORT, Answer)
    assert server.requests[0]["messages"][0]["content"] == "Be brief."


def test_a_format_refusal_steps_down_that_kind_of_request_alone(secret):
    """Refused json_schema for one schema, another schema is still asked in json_schema first."""
    with ModelServer(answer, reject_json_schema=True) as server:
        asker = client(server)
        asker.ask(SHORT, Answer)
        asker.ask(SHORT, Other)
    kinds = [r.get("response_format", {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_schema", "json_object"]


def test_a_stepped_down_call_records_its_format(secret):
    """A call asked in a weaker format than the one set says which."""
    with ModelServer(answer, reject_json_schema=True) as server:
        reply = client(server).ask(SHORT, Answer)
    assert [c.format for c in reply.calls] == [None, "json_object"]


@pytest.mark.parametrize("kind", ["ollama", "llama-cpp"])
def test_thinking_sent_apart_is_kept_with_the_call(secret, kind):
    """Ollama's reasoning and llama.cpp's reasoning_content are recorded with the call."""
    quirks = dataclasses.replace(QUIRKS[kind], thinking="First { I look } around.")
    with ModelServer(answer, quirks=quirks) as server:
        reply = client(server).ask(SHORT, Answer)
    assert reply.value is not None and reply.calls[0].reasoning == "First { I look } around."


def test_a_think_block_with_braces_is_read_past_and_kept(secret):
    """An inline <think> block holding braces neither breaks parsing nor is lost."""
    quirks = dataclasses.replace(QUIRKS["vllm"], thinking='maybe {"command": "back"')
    with ModelServer(answer, quirks=quirks) as server:
        reply = client(server).ask(SHORT, Answer)
    assert reply.value == Answer(command="forward")
    assert reply.calls[0].reasoning == 'maybe {"command": "back"'


def test_content_as_a_list_of_parts_is_read(secret):
    """An answer whose content is a list of text parts is read as its text."""
    quirks = dataclasses.replace(QUIRKS["gemini"], parts=True)
    with ModelServer(answer, quirks=quirks) as server:
        reply = client(server).ask(SHORT, Answer)
    assert reply.value == Answer(command="forward") and reply.calls[0].error is None


def test_a_truncated_answer_is_recorded_as_such(secret):
    """finish_reason length is kept with the call; stop is not written."""
    quirks = dataclasses.replace(QUIRKS["vllm"], finish_reason="length")
    with ModelServer(answer, quirks=quirks) as server:
        cut = client(server).ask(SHORT, Answer)
    with ModelServer(answer, quirks=QUIRKS["vllm"]) as server:
        whole = client(server).ask(SHORT, Answer)
    assert cut.calls[0].finish_reason == "length" and whole.calls[0].finish_reason is None
    assert "finish_reason" not in whole.calls[0].model_dump_json(exclude_defaults=False)


@pytest.mark.parametrize(("kind", "route"), [("llama-cpp", "/props"), ("ollama", "/api/show")])
def test_the_template_a_server_tells_is_recorded(secret, kind, route):
    """llama.cpp's /props and Ollama's /api/show name the template every call records."""
    with ModelServer(answer, quirks=QUIRKS[kind]) as server:
        reply = client(server, server=kind).ask(SHORT, Answer)
    assert reply.calls[0].chat_template.startswith("gemma sha256:")
    assert reply.calls[0].chat_template.endswith(f"(from {route})")


def test_the_template_a_user_states_is_recorded(secret):
    """A server that does not tell its template (llama-cpp-python): the stated one is kept."""
    with ModelServer(answer, quirks=QUIRKS["llama-cpp-python"]) as server:
        reply = client(server, chat_template="gemma (jinja from the GGUF)").ask(SHORT, Answer)
    assert reply.calls[0].chat_template == "gemma (jinja from the GGUF)"


def test_a_template_is_recorded_on_replay_too(secret, tmp_path):
    """The template stored with a cached answer comes back with it."""
    cache = str(tmp_path / "c.sqlite")
    with ModelServer(answer, quirks=QUIRKS["llama-cpp"]) as server:
        live = client(server, cache=cache).ask(SHORT, Answer)
        replayed = client(server, cache=cache, replay="true").ask(SHORT, Answer)
    assert replayed.calls[0].chat_template == live.calls[0].chat_template is not None


def test_the_kinds_of_server_are_the_names_the_setting_takes():
    """Every kind in the table is a name -a server= accepts, and the other way round."""
    assert tuple(KINDS) == SERVERS


def test_an_unknown_kind_of_server_is_refused_naming_the_kinds():
    """A misspelt server kind is refused before any call, listing the kinds."""
    with pytest.raises(ParameterError, match="server 'vlm' is not one of .*vllm"):
        ModelConfig.from_args({"model": "m", "base_url": "http://h/v1", "server": "vlm"})


def test_a_hosted_api_is_told_by_its_host():
    """Anthropic's host needs no -a server: its kind, which ignores the format, is known."""
    config = ModelConfig(model="m", base_url="https://api.anthropic.com/v1/")
    assert server_kind(config).name == "anthropic"


def test_an_unreadable_cut_answer_says_it_was_cut(secret):
    """An answer cut at max_tokens that does not parse says why, to the model and the record."""
    quirks = dataclasses.replace(QUIRKS["vllm"], finish_reason="length")
    with ModelServer(lambda messages: '{"command": "forw', quirks=quirks) as server:
        reply = client(server).ask(SHORT, Answer)
        reasked = server.requests[-1]["messages"][-1]["content"]
    assert reply.value is None and "cut at max_tokens" in reply.error
    assert "cut at max_tokens" in reasked


def test_a_reasoning_models_refusals_replay_the_same(secret, tmp_path):
    """Refused fields are cached like answers: a replay adapts the same way, offline."""
    cache = str(tmp_path / "c.sqlite")
    with ModelServer(answer, quirks=QUIRKS["openai-reasoning"]) as server:
        live = client(server, cache=cache).ask(SHORT, Answer)
        count = server.count
        replayed = client(server, cache=cache, replay="true").ask(SHORT, Answer)
        assert server.count == count
    assert [c.error for c in replayed.calls] == [c.error for c in live.calls]
    assert replayed.value == live.value


def test_a_refused_call_records_the_template_too(secret):
    """llama-cpp-python refuses json_schema first: that call names the stated template as well."""
    quirks = QUIRKS["llama-cpp-python"]
    with ModelServer(answer, quirks=quirks, reject_json_schema=True) as server:
        reply = client(server, chat_template="gemma (stated)").ask(SHORT, Answer)
    assert reply.calls[0].error == "rejected" and len(reply.calls) > 1
    assert {call.chat_template for call in reply.calls} == {"gemma (stated)"}
