import threading
import time

import pytest
from pydantic import BaseModel

from sortie.core.errors import ConfigError, ParameterError
from sortie.models import ModelCallError, ModelClient, ModelConfig, ReplayMissError
from sortie.models.completion import RAW_LIMIT
from sortie.models.retry import Backoff, Failure
from sortie.testing.model_server import Fault, ModelServer
from tests.conftest import SERIAL
from tests.models.conftest import FAST

pytestmark = SERIAL  # time-outs, retries and waits against the wall clock (tests/conftest.py)


class Answer(BaseModel):
    """The schema the tests ask for."""

    command: str


MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Go?"}]


def client(server, **args) -> ModelClient:
    return ModelClient(
        ModelConfig.from_args({"model": "m", "base_url": server.base_url, **FAST, **args})
    )


def answer(messages) -> str:
    return '{"command": "forward"}'


def test_answer_is_validated_and_accounted(secret):
    """An answer comes back validated, with its token usage and latency recorded."""
    with ModelServer(answer) as server:
        reply = client(server).ask(MESSAGES, Answer)
    assert reply.value == Answer(command="forward") and reply.error is None
    (call,) = reply.calls
    assert call.model == "m" and call.tokens_in > 0 and call.tokens_out > 0
    assert call.latency > 0 and call.attempts == 1 and not call.cached


@pytest.mark.parametrize(
    "fault", [Fault.RATE_LIMIT, Fault.SERVER_ERROR, Fault.RESET, Fault.MALFORMED, Fault.TRUNCATED]
)
def test_transient_faults_are_retried(secret, fault):
    """429, 500, a reset connection, a garbled and a truncated body each cost one retry."""
    with ModelServer(answer) as server:
        server.inject(fault, retry_after=0.01)
        reply = client(server).ask(MESSAGES, Answer)
        assert server.count == 2
    assert reply.value is not None and reply.calls[0].attempts == 2


def test_timeout_is_retried(secret):
    """A server slower than the time-out is asked again, after its health check (local)."""
    with ModelServer(answer) as server:
        server.inject(Fault.LATENCY, delay=2.5)
        reply = client(server, timeout="1.0").ask(MESSAGES, Answer)
        probe = server.requests[1]
        assert server.count == 3 and probe["max_tokens"] == 1  # the health check's request
    assert reply.value is not None and reply.calls[0].attempts == 2


def test_timeout_is_retried_at_once_without_health_wait(secret):
    """With ``health_wait=0`` the retry follows the time-out without a health check."""
    with ModelServer(answer, health=True) as server:
        server.inject(Fault.LATENCY, delay=0.6)
        reply = client(server, timeout="0.2", health_wait="0").ask(MESSAGES, Answer)
        assert server.count == 2 and server.health_checks == 0
    assert reply.value is not None and reply.calls[0].attempts == 2


def test_retry_after_is_honoured(secret):
    """A 429's Retry-After is waited out even when the backoff alone would be shorter."""
    with ModelServer(answer) as server:
        server.inject(Fault.RATE_LIMIT, retry_after=0.3)
        started = time.perf_counter()
        client(server).ask(MESSAGES, Answer)
        waited = time.perf_counter() - started
    assert 0.3 <= waited < 2.0


def test_retry_after_is_capped(secret):
    """A Retry-After longer than retry_after_max is cut to it."""
    with ModelServer(answer) as server:
        server.inject(Fault.RATE_LIMIT, retry_after=30)
        started = time.perf_counter()
        client(server, retry_after_max="0.05").ask(MESSAGES, Answer)
    assert time.perf_counter() - started < 2.0


def test_faults_beyond_the_retry_limit_raise(secret):
    """After max_retries retries the call fails with its kind, and no more requests are sent."""
    with ModelServer(answer) as server:
        server.inject(Fault.SERVER_ERROR, times=10)
        with pytest.raises(ModelCallError) as error:
            client(server, max_retries="2").ask(MESSAGES, Answer)
        assert server.count == 3
    assert error.value.kind == "server" and secret not in str(error.value)


def test_backoff_jitter_repeats_with_the_seed():
    """The same seed gives the same waits; waits grow and stay under the cap."""
    waits = [
        [Backoff(0.1, 1.0, 5.0, seed=7).wait(n, Failure("server")) for n in range(1, 6)]
        for _ in range(2)
    ]
    assert waits[0] == waits[1]
    assert waits[0][0] < waits[0][3] <= 1.0


def test_json_schema_refused_falls_back_to_json_mode(secret):
    """A 400 to json_schema makes the client use JSON mode with the schema in the prompt."""
    with ModelServer(answer, reject_json_schema=True) as server:
        model = client(server)
        reply = model.ask(MESSAGES, Answer)
        model.ask(MESSAGES, Answer)
        first, second, third = server.requests
    assert first["response_format"]["type"] == "json_schema"
    schema = Answer.model_json_schema()  # for llama.cpp's servers, which make it a grammar
    assert second["response_format"] == {"type": "json_object", "schema": schema}
    assert "JSON schema" in second["messages"][0]["content"]
    assert third["response_format"] == second["response_format"]  # the fallback sticks
    assert [c.error for c in reply.calls] == ["rejected", None] and reply.value is not None


def test_json_mode_refused_falls_back_to_the_prompt(secret):
    """A server that refuses both formats is asked with the schema in the prompt alone."""
    with ModelServer(answer, reject_json_schema=True, reject_json_mode=True) as server:
        reply = client(server).ask(MESSAGES, Answer)
        assert "response_format" not in server.requests[-1]
    assert reply.value is not None and len(reply.calls) == 3


def test_schema_violation_is_retried_with_the_error(secret):
    """An off-schema answer is retried once, showing the model the validation error."""
    with ModelServer(answer) as server:
        server.inject(Fault.VIOLATE)
        reply = client(server).ask(MESSAGES, Answer)
        retry = server.requests[-1]["messages"]
    assert retry[-2]["role"] == "assistant" and "command" in retry[-1]["content"]
    assert [c.error for c in reply.calls] == ["format", None] and reply.value is not None


def test_two_violations_give_a_format_error(secret):
    """An answer still off-schema after the retry comes back as an error, not a value."""
    with ModelServer(answer) as server:
        server.inject(Fault.VIOLATE, times=2)
        reply = client(server).ask(MESSAGES, Answer)
    assert reply.value is None and "schema" in (reply.error or "")
    assert [c.error for c in reply.calls] == ["format", "format"]


def test_without_revalidation_an_off_schema_answer_is_not_retried(secret):
    """``revalidate=False``: one call, marked a format error, for the caller to re-ask."""
    with ModelServer(answer) as server:
        server.inject(Fault.VIOLATE)
        reply = client(server).ask(MESSAGES, Answer, revalidate=False)
    assert reply.value is None and "schema" in (reply.error or "") and server.count == 1
    assert [c.error for c in reply.calls] == ["format"]


def test_a_huge_answer_is_a_format_error(secret):
    """A 1 MB answer is refused as too long, then retried."""
    with ModelServer(answer) as server:
        server.inject(Fault.HUGE)
        reply = client(server).ask(MESSAGES, Answer)
        assert len(server.requests[-1]["messages"][-2]["content"]) < 2000
    assert reply.value is not None and reply.calls[0].error == "format"


def test_cache_answers_a_repeated_request(secret, tmp_path):
    """The second identical request is answered from the cache with the first latency."""
    with ModelServer(answer) as server:
        model = client(server, cache=str(tmp_path / "cache.sqlite"))
        first, second = model.ask(MESSAGES, Answer), model.ask(MESSAGES, Answer)
        assert server.count == 1
    assert second.calls[0].cached and second.calls[0].latency == first.calls[0].latency


def test_replay_answers_offline_and_a_miss_is_loud(secret, tmp_path):
    """A replay needs no server; a request the cache lacks names its hash and the file."""
    cache = str(tmp_path / "cache.sqlite")
    with ModelServer(answer, reject_json_schema=True) as server:
        live = client(server, cache=cache).ask(MESSAGES, Answer)
        url = server.base_url
    replay = ModelClient(
        ModelConfig.from_args({"model": "m", "base_url": url, "cache": cache, "replay": "true"})
    )
    again = replay.ask(MESSAGES, Answer)
    assert again.value == live.value and again.latency == live.latency
    assert [c.error for c in again.calls] == ["rejected", None]
    with pytest.raises(ReplayMissError, match=rf"request [0-9a-f]{{64}} .*{cache}"):
        replay.ask([{"role": "user", "content": "something else"}], Answer)


def test_replay_needs_an_existing_cache(secret, tmp_path):
    """Replay without a cache, or with a missing file, fails before any episode runs."""
    with pytest.raises(ParameterError):
        ModelConfig.from_args({"model": "m", "base_url": "http://x/v1", "replay": "1"})
    config = ModelConfig.from_args(
        {
            "model": "m",
            "base_url": "http://x/v1",
            "replay": "1",
            "cache": str(tmp_path / "none.sqlite"),
        }
    )
    with pytest.raises(ConfigError, match="does not exist"):
        ModelClient(config)


def test_the_key_is_never_an_argument(secret):
    """An api_key argument is refused without echoing its value."""
    with pytest.raises(ConfigError) as error:
        ModelConfig.from_args({"model": "m", "base_url": "http://x/v1", "api_key": secret})
    assert secret not in str(error.value) and "SORTIE_MODEL_API_KEY" in str(error.value)


def test_a_password_in_the_base_url_argument_is_refused_unechoed(secret):
    """Agent arguments are stored; a URL with user:password must come from the environment."""
    with pytest.raises(ConfigError, match="SORTIE_MODEL_BASE_URL") as error:
        ModelConfig.from_args({"model": "m", "base_url": f"http://alice:{secret}@host/v1"})
    assert secret not in str(error.value)


def test_settings_fall_back_to_the_environment(monkeypatch):
    """Model, base URL and other settings come from SORTIE_MODEL_* when not given."""
    monkeypatch.setenv("SORTIE_MODEL_NAME", "qwen")
    monkeypatch.setenv("SORTIE_MODEL_BASE_URL", "http://u:p@host:8000/v1")
    monkeypatch.setenv("SORTIE_MODEL_TIMEOUT", "7")
    config = ModelConfig.from_args({"max_retries": "1"})
    assert (config.model, config.timeout, config.max_retries) == ("qwen", 7.0, 1)
    assert config.public()["base_url"] == "http://host:8000/v1"


def test_unknown_settings_are_refused():
    """A misspelt setting is an error listing the allowed ones."""
    with pytest.raises(ConfigError, match="unknown argument.*tmeout.*allowed"):
        ModelConfig.from_args({"model": "m", "base_url": "http://x/v1", "tmeout": "3"})


def test_calls_in_flight_are_capped_per_process(secret):
    """With concurrency 2, four threads never have more than two requests in flight."""
    with ModelServer(answer) as server:
        server.inject(Fault.LATENCY, times=4, delay=0.5)
        clients = [client(server, concurrency="2") for _ in range(4)]
        threads = [threading.Thread(target=c.ask, args=(MESSAGES, Answer)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert server.count == 4 and server.max_in_flight == 2


@pytest.mark.parametrize("status", [500, 422])
def test_a_format_refusal_of_any_status_steps_down_at_once(secret, status):
    """llama.cpp's 500 (or a 422) naming the format is a refusal: no retries, JSON mode next."""
    with ModelServer(answer, reject_json_schema=True, refusal_status=status) as server:
        reply = client(server).ask(MESSAGES, Answer)
        kinds = [r["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema", "json_object"] and reply.value is not None
    assert [(c.error, c.attempts) for c in reply.calls] == [("rejected", 1), (None, 1)]


def test_a_refused_format_is_never_asked_again(secret):
    """After a 500 refusing json_schema, later questions (retries included) skip it."""
    with ModelServer(answer, reject_json_schema=True, refusal_status=500) as server:
        server.inject(Fault.VIOLATE, times=2)  # the first refusal uses none of these up
        model = client(server)
        model.ask(MESSAGES, Answer)
        model.ask(MESSAGES, Answer)
        kinds = [r["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object"]


def test_a_server_error_without_format_words_is_retried(secret):
    """A plain 500 to a request with a response format is a server failure, not a refusal."""
    with ModelServer(answer) as server:
        server.inject(Fault.SERVER_ERROR)
        reply = client(server).ask(MESSAGES, Answer)
        kinds = [r["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema", "json_schema"] and reply.calls[0].attempts == 2


SHAPES = [
    Fault.CHOICES_NOT_LIST,
    Fault.CONTENT_NOT_TEXT,
    Fault.NO_CHOICES,
    Fault.NO_MESSAGE,
    Fault.DEEP,
]


@pytest.mark.parametrize("fault", SHAPES)
def test_an_answer_of_the_wrong_shape_is_a_format_error(secret, fault):
    """JSON that is not a chat completion is one format-error call, not an exception."""
    with ModelServer(answer) as server:
        server.inject(fault)
        reply = client(server).ask(MESSAGES, Answer)
        assert server.count == 1
    assert reply.value is None and (reply.error or "").startswith("malformed answer: ")
    assert [(c.error, c.attempts) for c in reply.calls] == [("format", 1)]


@pytest.mark.parametrize("fault", SHAPES)
def test_a_malformed_answer_keeps_its_raw_text_cut(secret, fault):
    """The reply's text is the body as the server sent it, cut to a few thousand characters."""
    with ModelServer(answer) as server:
        server.inject(fault)
        reply = client(server).ask(MESSAGES, Answer)
    assert len(reply.text) <= RAW_LIMIT + len(" [cut]")
    if fault is Fault.DEEP:
        assert reply.text.startswith('{"choices": [[[') and reply.text.endswith("[[ [cut]")
    else:
        assert '"id": "chatcmpl-test"' in reply.text and not reply.text.endswith(" [cut]")


def test_a_malformed_answer_replays_the_same(secret, tmp_path):
    """A malformed answer is cached, and a replay gives the same text, error and record."""
    cache = str(tmp_path / "cache.sqlite")
    with ModelServer(answer) as server:
        server.inject(Fault.CONTENT_NOT_TEXT)
        live = client(server, cache=cache).ask(MESSAGES, Answer)
        url = server.base_url
    replay = ModelConfig.from_args(
        {"model": "m", "base_url": url, "cache": cache, "replay": "true"}
    )
    again = ModelClient(replay).ask(MESSAGES, Answer)
    assert (again.text, again.error) == (live.text, live.error)
    assert [c.error for c in again.calls] == ["format"] and again.calls[0].cached


def test_an_echoed_key_is_scrubbed_from_answers_and_the_cache(secret, tmp_path):
    """A server repeating the key in a 200 leaves no trace of it in the reply or the cache."""
    cache = tmp_path / "cache.sqlite"
    with ModelServer(answer, echo_key=True) as server:
        model = client(server, cache=str(cache))
        reply = model.ask(MESSAGES, Answer)
        assert server.headers[0]["authorization"] == f"Bearer {secret}"
        model.close()
    assert secret not in reply.text and "[redacted]" in reply.text and reply.value is not None
    assert secret.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_an_echoed_key_is_scrubbed_from_refusals_and_errors(secret, tmp_path):
    """The key echoed in a stored refusal reason or a failure message is blotted out."""
    cache = tmp_path / "cache.sqlite"
    with ModelServer(answer, reject_json_schema=True, echo_key=True) as server:
        server.inject(Fault.SERVER_ERROR, times=10)
        model = client(server, cache=str(cache), max_retries="1")
        with pytest.raises(ModelCallError) as error:
            model.ask(MESSAGES, Answer)
        model.close()
    assert "[redacted]" in str(error.value) and secret not in str(error.value)
    rows = [row for path in tmp_path.iterdir() for row in [path.read_bytes()]]
    assert secret.encode() not in b"".join(rows) and b"[redacted]" in b"".join(rows)


def test_an_echoed_url_password_is_scrubbed(secret, monkeypatch):
    """A user:password in SORTIE_MODEL_BASE_URL, echoed back in any form, is blotted out."""
    monkeypatch.delenv("SORTIE_MODEL_API_KEY")
    with ModelServer(answer, echo_key=True) as server:
        url = server.base_url.replace("http://", "http://alice:hunter2-pass@")
        monkeypatch.setenv("SORTIE_MODEL_BASE_URL", url)
        model = ModelClient(ModelConfig.from_args({"model": "m", **FAST}))
        reply = model.ask(MESSAGES, Answer)
        sent = server.headers[0]["authorization"]
    assert sent.startswith("Basic ") and "hunter2-pass" not in reply.text
    assert sent.split()[-1] not in reply.text and "[redacted]" in reply.text


def test_two_servers_of_one_model_do_not_share_cache_entries(secret, tmp_path):
    """The same model and prompt asked of two servers gets each server's own answer."""
    cache = str(tmp_path / "cache.sqlite")
    back = '{"command": "back"}'
    with ModelServer(answer) as first, ModelServer(lambda m: back) as second:
        one = client(first, cache=cache).ask(MESSAGES, Answer)
        two = client(second, cache=cache).ask(MESSAGES, Answer)
        again = client(second, cache=cache).ask(MESSAGES, Answer)
        assert (first.count, second.count) == (1, 1)
    assert (one.value, two.value) == (Answer(command="forward"), Answer(command="back"))
    assert again.value == Answer(command="back") and again.calls[0].cached


def test_an_answer_nested_too_deep_is_a_format_error_not_a_crash(secret):
    """100,000 nested brackets as the answer: refused as a format error, then retried."""
    said = iter(["[" * 100_000 + "]" * 100_000, '{"command": "go"}'])
    with ModelServer(lambda messages: next(said)) as server:
        reply = client(server).ask(MESSAGES, Answer)
    assert reply.calls[0].error == "format" and reply.value is not None
    assert "nested 100000 levels deep" in server.requests[-1]["messages"][-1]["content"]


def test_a_re_ask_sends_back_an_excerpt_of_a_long_bad_answer(secret):
    """An unreadable answer of 150,000 characters is shown again cut to REASK_ECHO, marked."""
    from sortie.models.client import REASK_ECHO

    with ModelServer(lambda messages: "{not json " + "y" * 150_000) as server:
        reply = client(server).ask(MESSAGES, Answer)
        shown = server.requests[1]["messages"][-2]
    assert reply.value is None and shown["role"] == "assistant"
    assert shown["content"].endswith(" [cut]") and len(shown["content"]) == REASK_ECHO + 6
