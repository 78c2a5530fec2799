"""Checking, before a run, that the model server answers and serves the model.

A run against a server that is down, or with a misspelt model name, would otherwise start
every episode and end each one as ``agent_error``. The check lists the server's models
(``GET /models``); when the model is not listed, or the server has no such endpoint, a
one-token chat call decides, since some servers (llama.cpp) answer any model name.
"""

from __future__ import annotations

import json
import warnings
from urllib.parse import urlsplit

import openai

from sortie.core.errors import ConfigError
from sortie.models.config import ModelConfig, redact_url, scrub
from sortie.models.deadline import whole_answer
from sortie.models.errors import Cause, refusal_of


def check_server(sdk: openai.OpenAI, config: ModelConfig) -> None:
    """Raise ConfigError unless the server at ``config.base_url`` serves ``config.model``.

    Raises:
        ConfigError: the server is unreachable, refuses the key, or does not know the model.
    """
    try:
        with whole_answer(config.timeout):
            served = _listed(sdk.models.with_raw_response.list(timeout=config.timeout).text)
    except openai.APIConnectionError as error:
        raise unreachable(config, error) from None
    except openai.APIStatusError as error:
        if error.status_code in (401, 403):
            raise _key_refused(config, error) from None
        served = None  # no /models endpoint (404) or a busy server: the chat call decides
    if served is None or config.model not in served:
        _try_chat(sdk, config, served)
        if served:  # listed others, yet answered: a server that answers any name (llama.cpp)
            warnings.warn(
                f"model {config.model!r} is not among the models the server at "
                f"{redact_url(config.base_url)} lists ({', '.join(sorted(served))}), but it "
                f"answered: it answers any name, and the run is recorded under "
                f"{config.model!r}; check the name",
                UserWarning,
                stacklevel=2,
            )


def _listed(body: str) -> list[str] | None:
    """Return the model names of a ``GET /models`` body, or None if it is not such a list."""
    try:
        data = json.loads(body).get("data")
    except (ValueError, RecursionError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _try_chat(sdk: openai.OpenAI, config: ModelConfig, served: list[str] | None) -> None:
    """Send a one-token chat call; raise ConfigError if the server refuses the model."""
    try:
        with whole_answer(config.timeout):
            sdk.chat.completions.create(
                model=config.model,
                max_tokens=1,
                timeout=config.timeout,
                messages=[{"role": "user", "content": "Say OK."}],
            )
    except openai.APIConnectionError as error:
        raise unreachable(config, error) from None
    except (openai.RateLimitError, openai.InternalServerError):
        return  # it is there and knows the request; the run's retries deal with busy spells
    except (ValueError, RecursionError, openai.APIResponseValidationError) as error:
        raise _not_openai(config, error) from None
    except openai.APIStatusError as error:
        if error.status_code in (401, 403):
            raise _key_refused(config, error) from None
        if error.status_code == 404 and served is None:
            raise _no_api_here(config) from None
        if _refuses_a_field(error):
            return  # it knows the model, which refuses max_tokens: the client adapts in a run
        raise _unknown_model(config, error, served) from None


def _refuses_a_field(error: openai.APIStatusError) -> bool:
    """Return whether a test call was refused for a field (a reasoning model's max_tokens)."""
    refusal = refusal_of(error, {"model": "", "messages": [], "max_tokens": 1})
    return refusal is not None and refusal.cause is Cause.PARAMETER


def unreachable(config: ModelConfig, error: Exception) -> ConfigError:
    """Return the error for a server nobody answers at (naming its host and port)."""
    what = "timed out" if isinstance(error, openai.APITimeoutError) else "connection failed"
    return ConfigError(
        f"model server unreachable at {redact_url(config.base_url)} "
        f"({_host_port(config.base_url)}): {what}. Usual causes: the server "
        f"is not running or still starting, it listens on another host or "
        f"port, or a firewall or proxy is in the way"
    )


def _key_refused(config: ModelConfig, error: openai.APIStatusError) -> ConfigError:
    return ConfigError(
        scrub(
            f"model server at {redact_url(config.base_url)} refused the API "
            f"key (HTTP {error.status_code}): put the key in "
            f"{config.api_key_env}, or name its variable with "
            f"-a api_key_env=NAME",
            config,
        )
    )


def _unknown_model(
    config: ModelConfig, error: openai.APIStatusError, served: list[str] | None
) -> ConfigError:
    if served is None:
        listed = "it has no model list"
    else:
        listed = f"it serves: {', '.join(sorted(served))}" if served else "it lists no models"
    return ConfigError(
        scrub(
            f"model {config.model!r} unknown to the server at "
            f"{redact_url(config.base_url)}; {listed} (a test call answered "
            f"HTTP {error.status_code}: {str(error)[:200]})",
            config,
        )
    )


def _no_api_here(config: ModelConfig) -> ConfigError:
    """Return the error for a server that answers 404 to the model list and to a chat call."""
    hint = (
        "base_url probably lacks /v1 (e.g. http://HOST:PORT/v1)"
        if not config.base_url.rstrip("/").endswith("/v1")
        else "check the server's OpenAI API path"
    )
    return ConfigError(
        scrub(
            f"no OpenAI API at {redact_url(config.base_url)}: both the model list and a test "
            f"chat call answered HTTP 404 (not found); {hint}",
            config,
        )
    )


def _not_openai(config: ModelConfig, error: Exception) -> ConfigError:
    """Return the error for a server whose answer is not an OpenAI chat completion."""
    return ConfigError(
        scrub(
            f"model server at {redact_url(config.base_url)} answered a test call with "
            f"something that is not an OpenAI-compatible chat completion "
            f"({type(error).__name__}: {str(error)[:120]}); check that base_url points at "
            f"the server's OpenAI API (usually ending in /v1)",
            config,
        )
    )


def _host_port(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = str(parts.port or {"http": "80", "https": "443"}.get(parts.scheme, "?"))
    except ValueError:  # a port that is not a number
        port = "?"
    return f"{parts.hostname or '?'}:{port}"
