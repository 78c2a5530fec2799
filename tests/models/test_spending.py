"""Rate limits read from a 429's body, quotas not retried, tokens, served model and cost kept."""

import json
import time

import pytest

from sortie.core.errors import ConfigError, ParameterError
from sortie.models import CachedResponse, ModelCallError, ModelConfig, ResponseCache
from sortie.models.ratelimits import read_limit
from sortie.models.retry import ErrorKind
from sortie.testing.hosted_server import HostedServer, gemini_limit, openai_spent
from sortie.testing.model_server import Fault
from tests.agents.test_mllm_rescue import run
from tests.models.test_client import MESSAGES, Answer, answer, client


def test_a_retry_delay_in_the_body_is_waited_for(secret):
    """Gemini's ``RetryInfo.retryDelay`` (no Retry-After header) sets the wait before the retry."""
    with HostedServer(answer) as server:
        server.reply(429, gemini_limit("0.6s"))
        started = time.perf_counter()
        reply = client(server).ask(MESSAGES, Answer)
    assert reply.value is not None and reply.calls[0].attempts == 2
    assert time.perf_counter() - started >= 0.6 and reply.calls[0].waited >= 0.6


def test_a_daily_quota_is_not_retried(secret):
    """A 429 for a daily quota used up fails the call at once with the quota named."""
    with HostedServer(answer) as server:
        server.reply(429, gemini_limit("30s", "GenerateRequestsPerDayPerProjectPerModel"))
        with pytest.raises(ModelCallError, match="daily quota .*PerDay.* used up") as failed:
            client(server).ask(MESSAGES, Answer)
        assert server.count == 1
    assert failed.value.kind == ErrorKind.QUOTA and failed.value.calls[0].error == "quota"


def test_a_spent_quota_stops_the_run(secret, tmp_path):
    """A spent quota is one error that stops the run, not an error episode after another."""
    with HostedServer(answer) as server:
        server.reply(429, openai_spent(), times=20)
        with pytest.raises(ConfigError, match="insufficient_quota"):
            run(server, tmp_path)
        assert server.count == 1


def test_a_spent_balance_is_not_retried(secret):
    """OpenAI's ``insufficient_quota`` 429 fails the call at once, saying the quota is used up."""
    with HostedServer(answer) as server:
        server.reply(429, openai_spent())
        with pytest.raises(ModelCallError, match="insufficient_quota: .* used up"):
            client(server).ask(MESSAGES, Answer)
        assert server.count == 1


def test_the_model_served_is_kept_beside_the_one_asked_for(secret):
    """An answer naming another model (an alias's snapshot) records both names."""
    with HostedServer(answer, served="m-2024-08-06") as server:
        (call,) = client(server).ask(MESSAGES, Answer).calls
    assert call.model == "m" and call.served == "m-2024-08-06"


def test_the_model_asked_for_is_not_repeated(secret):
    """An answer naming the model asked for writes no ``served`` (records stay as they were)."""
    with HostedServer(answer) as server:
        (call,) = client(server).ask(MESSAGES, Answer).calls
    assert call.served is None and "served" not in call.model_dump_json()


def test_cost_is_recorded_at_the_prices_given(secret):
    """With prices per million tokens, each call records what its tokens cost."""
    with HostedServer(answer) as server:
        (call,) = client(server, price_in="2", price_out="8").ask(MESSAGES, Answer).calls
    assert call.cost == pytest.approx((call.tokens_in * 2 + call.tokens_out * 8) / 1e6)
    assert call.cost > 0


def test_no_prices_no_cost(secret):
    """Without prices a call records no cost (not a cost of 0)."""
    with HostedServer(answer) as server:
        (call,) = client(server).ask(MESSAGES, Answer).calls
    assert call.cost is None


def test_one_price_alone_is_refused():
    """A price for prompt tokens without one for answer tokens is refused, naming both."""
    with pytest.raises(ParameterError, match="give both price_in and price_out"):
        ModelConfig.from_args({"model": "m", "base_url": "http://x:1/v1", "price_in": "1"})


def test_a_malformed_answer_counts_the_tokens_it_reports(secret):
    """A 200 of the wrong shape still counts the prompt and answer tokens its body reports."""
    with HostedServer(answer) as server:
        server.inject(Fault.CHOICES_NOT_LIST)
        (call,) = client(server).ask(MESSAGES, Answer).calls
    assert call.error == ErrorKind.FORMAT and call.tokens_in > 0 and call.tokens_out > 0


def test_a_failed_attempt_counts_the_tokens_it_reports(secret):
    """An error body that reports usage adds its tokens to the call's."""
    usage = {"prompt_tokens": 100, "completion_tokens": 7}
    with HostedServer(answer) as server:
        server.reply(503, {"error": {"message": "overloaded"}, "usage": usage})
        (call,) = client(server).ask(MESSAGES, Answer).calls
    assert call.attempts == 2 and call.tokens_in > 100 and call.tokens_out > 7


def test_a_body_given_as_text_in_the_message_is_read():
    """A proxy's OpenAI-style error holding Gemini's body as text still gives the delay."""
    wrapped = {"error": {"message": json.dumps(gemini_limit("12s")[0]), "code": 429}}
    assert read_limit(json.dumps(wrapped)).retry_after == 12.0


def test_the_cache_keeps_the_time_split_and_the_model_served(tmp_path):
    """A stored answer comes back with its waits, failed time and served model (for replays)."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    stored = CachedResponse("m", "{}", 1, 1, 9.0, 2, waited=5.0, failed_time=3.0, served="m-1")
    cache.put("k", stored)
    assert cache.get("k") == stored
