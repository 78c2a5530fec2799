"""Settings of the model client, from agent arguments with ``SORTIE_MODEL_*`` fallbacks.

The API key is never a setting: agent arguments are written into every record and into the
run's config, so the key is read from the environment when a request is sent, from the
variable named by ``api_key_env`` (``SORTIE_MODEL_API_KEY`` unless told otherwise).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from sortie.core.errors import ConfigError, ParameterError

ENV_PREFIX = "SORTIE_MODEL_"
DEFAULT_KEY_ENV = "SORTIE_MODEL_API_KEY"
SECRET_ARGS = frozenset({"api_key", "key", "token", "password", "secret"})
NO_KEY = "sortie-no-key"
"""Sent when no key is set: local servers (vLLM, Ollama, llama.cpp) accept any value."""


_OPTIONAL = ("health_wait", "price_in", "price_out")
"""Numeric settings that may be None (unset), and are at least 0 when set."""
SERVERS = (
    "openai-compatible",
    "vllm",
    "ollama",
    "llama-cpp",
    "llama-cpp-python",
    "transformers",
    "openai",
    "gemini",
    "anthropic",
)
"""The kinds of server ``server`` may name (``sortie.models.server_kinds`` says what each does)."""


class Structured:
    """Where the structured-output fallback chain starts (``ModelConfig.structured``)."""

    SCHEMA = "json_schema"  # response_format json_schema (strict servers enforce it)
    JSON = "json_object"  # JSON mode; the schema goes into the prompt and the format
    PROMPT = "prompt"  # no response_format; the schema goes into the prompt
    CHAIN = (SCHEMA, JSON, PROMPT)


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """How to reach a model and how patiently; never holds the API key."""

    model: str
    """Model name as the server knows it (``SORTIE_MODEL_NAME``)."""
    base_url: str
    """OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1`` (``SORTIE_MODEL_BASE_URL``)."""
    api_key_env: str = DEFAULT_KEY_ENV
    """Name of the environment variable that holds the key (the key itself is never stored)."""
    temperature: float = 0.0
    """Sampling temperature."""
    max_tokens: int = 1024
    """Largest answer, in tokens."""
    timeout: float = 120.0
    """Seconds one HTTP attempt may take, from the request to the answer's last byte (a
    server trickling its answer is cut then, and the attempt counts as a time-out)."""
    max_retries: int = 4
    """Extra attempts after a 429, a 5xx, a time-out, a dropped connection or a garbled body."""
    health_wait: float | None = None
    """After a time-out, the longest wait for a server on this machine to pass its health
    check before the retry, seconds (``sortie.models.health``; 0: retry without a check).
    None: as long as ``timeout`` (the abandoned answer had that long already), so a time-out
    costs at most twice the time-out before the retry."""
    backoff: float = 1.0
    """First wait before a retry, seconds; doubles with each retry, with jitter."""
    backoff_max: float = 30.0
    """Longest wait computed by the backoff, seconds."""
    retry_after_max: float = 60.0
    """Longest Retry-After a server may impose, seconds (longer ones are cut to this)."""
    concurrency: int = 8
    """Calls in flight at once in one worker process (a semaphore per process, not per run)."""
    cache: str | None = None
    """SQLite response cache; every answer is stored there and reused when asked again."""
    replay: bool = False
    """Answer only from ``cache``; a request it does not hold is an error (offline replay)."""
    structured: str = Structured.SCHEMA
    """Where the output fallback chain starts: json_schema, json_object or prompt."""
    seed: int = 0
    """Seed of the retry jitter (so waits are repeatable)."""
    max_chars: int = 200_000
    """Longest answer text accepted; longer ones are format errors (a runaway model)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Extra request fields sent as they are (``top_p``, ``seed``...); part of the cache key."""
    price_in: float | None = None
    """Price of a million prompt tokens (any currency); with ``price_out``, each call's
    ``cost`` is recorded and the model-use table gets a cost column. None: no cost."""
    price_out: float | None = None
    """Price of a million answer tokens (the same currency as ``price_in``)."""
    system: str = "system"
    """Where the system prompt goes: ``system`` (its own message) or ``user`` (folded into
    the first user message, for chat templates that drop system messages: llama.cpp's
    ``gemma``)."""
    token_field: str = "max_tokens"
    """The request field that carries ``max_tokens``: ``max_completion_tokens`` for models
    that refuse ``max_tokens`` (OpenAI's reasoning models; learnt after the first refusal)."""
    omit: str = ""
    """Request fields never sent, comma-separated (``temperature`` for models that refuse
    it; learnt after the first refusal)."""
    server: str = ""
    """The kind of server (``sortie.models.server_kinds``: vllm, ollama, llama-cpp,
    llama-cpp-python, transformers, openai, gemini, anthropic); empty: told by the base URL's
    host where it can be, else a generic OpenAI-compatible server."""
    chat_template: str = ""
    """The chat template the server applies, as the user states it (``gemma``, a Jinja file's
    name...); recorded with every call. Empty: asked of the server where it tells
    (llama.cpp's ``/props``, Ollama's ``/api/show``)."""
    check_content: bool = True
    """Before a run, check from the prompt token counts the server reports that it keeps the
    system message and list content (images and text parts); a server that drops them stops
    the run."""

    @property
    def omit_fields(self) -> frozenset[str]:
        """Return the fields of ``omit`` as a set."""
        return frozenset(name.strip() for name in self.omit.split(",") if name.strip())

    def __post_init__(self) -> None:
        if self.structured not in Structured.CHAIN:
            raise ParameterError(
                f"model client: structured {self.structured!r} is not one of "
                f"{', '.join(Structured.CHAIN)}"
            )
        if self.system not in ("system", "user"):
            raise ParameterError(f"model client: system {self.system!r} is not one of system, user")
        if self.server not in ("", *SERVERS):
            raise ParameterError(
                f"model client: server {self.server!r} is not one of {', '.join(SERVERS)}"
            )
        if self.token_field not in ("max_tokens", "max_completion_tokens"):
            raise ParameterError(
                f"model client: token_field {self.token_field!r} is not one of "
                f"max_tokens, max_completion_tokens"
            )
        if self.replay and not self.cache:
            raise ParameterError("model client: replay=true needs cache=<path of the cache>")
        for name in ("timeout", "backoff", "backoff_max", "retry_after_max", *_OPTIONAL):
            if getattr(self, name) is not None and not getattr(self, name) >= 0:
                raise ParameterError(
                    f"model client: {name} must be >= 0, got {getattr(self, name)}"
                )
        _check_base_url(self.base_url)
        if not self.timeout > 0:
            raise ParameterError(
                f"model client: timeout must be > 0 seconds (one answer's wait), got {self.timeout}"
            )
        if (self.price_in is None) != (self.price_out is None):
            raise ParameterError(
                "model client: give both price_in and price_out (per million prompt and "
                f"answer tokens), got price_in={self.price_in}, price_out={self.price_out}"
            )
        if self.concurrency < 1 or self.max_retries < 0:
            raise ParameterError("model client: concurrency must be >= 1 and max_retries >= 0")

    @classmethod
    def from_args(
        cls, args: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> ModelConfig:
        """Build a config from agent arguments, filling gaps from ``SORTIE_MODEL_*`` variables.

        Raises:
            ConfigError: a secret among the arguments, an unknown name, a missing model or
                base URL, or a value of the wrong type.
        """
        env = os.environ if environ is None else environ
        _refuse_secrets(args)
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise ConfigError(
                f"model client: unknown argument(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(known))}"
            )
        values: dict[str, Any] = {}
        for name, spec in known.items():
            raw = args.get(name, env.get(env_name(name)))
            if raw is not None and raw != "":
                values[name] = _coerce(name, raw, spec)
        for needed, var in (("model", "SORTIE_MODEL_NAME"), ("base_url", "SORTIE_MODEL_BASE_URL")):
            if needed not in values:
                raise ConfigError(f"model client: no {needed}; pass -a {needed}=... or set {var}")
        return cls(**values)

    @property
    def health_budget(self) -> float:
        """Return the seconds a time-out's health check may take (``health_wait`` resolved)."""
        return self.timeout if self.health_wait is None else self.health_wait

    def public(self) -> dict[str, Any]:
        """Return the settings as a dict for records (the base URL without any user:password)."""
        settings = dataclasses.asdict(self)
        settings["base_url"] = redact_url(self.base_url)
        return settings


def env_name(setting: str) -> str:
    """Return the environment variable that supplies ``setting`` when no argument does."""
    return ENV_PREFIX + ("NAME" if setting == "model" else setting.upper())


def redact_url(url: str) -> str:
    """Return ``url`` without the user and password part, if it has one."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def api_key(config: ModelConfig, environ: Mapping[str, str] | None = None) -> str:
    """Return the API key from the environment variable the config names (or a placeholder)."""
    env = os.environ if environ is None else environ
    return env.get(config.api_key_env) or NO_KEY


def secrets(config: ModelConfig, environ: Mapping[str, str] | None = None) -> list[str]:
    """Return what must never be stored: the API key, a base URL's user:password, longest first.

    The user:password also travels base64-encoded (HTTP basic auth), so that form is included;
    parts shorter than 4 characters are left out (blotting them would garble any text).
    """
    key = api_key(config, environ)
    found = [] if key == NO_KEY else [key]
    netloc = urlsplit(config.base_url).netloc
    if "@" in netloc:
        userinfo = netloc.rsplit("@", 1)[0]
        plain = unquote(userinfo)
        parts = [userinfo, plain, base64.b64encode(plain.encode()).decode()]
        parts += [unquote(userinfo.split(":", 1)[1])] if ":" in userinfo else []
        found += [part for part in parts if len(part) >= 4]
    return sorted(set(found), key=len, reverse=True)


def scrub(text: str, config: ModelConfig) -> str:
    """Return ``text`` with every secret of ``config`` blotted out (a server may echo them)."""
    for secret in secrets(config):
        text = text.replace(secret, "[redacted]")
    return text


def _refuse_secrets(args: Mapping[str, Any]) -> None:
    url = str(args.get("base_url", ""))
    if redact_url(url) != url:  # never echo the URL: it holds a password
        raise ConfigError(
            "model client: base_url holds a user and password (agent arguments "
            "are stored in every record); give the URL in SORTIE_MODEL_BASE_URL "
            "instead, or a URL without credentials"
        )
    secrets = sorted(SECRET_ARGS & {name.lower() for name in args})
    if secrets:  # never echo the value: the message may end up in a log
        raise ConfigError(
            f"model client: {secrets[0]!r} must not be an agent argument (agent "
            f"arguments are stored in every record); put the key in the "
            f"environment as {DEFAULT_KEY_ENV}, or name another variable with "
            f"-a api_key_env=NAME"
        )


def _coerce(name: str, raw: Any, spec: dataclasses.Field[Any]) -> Any:
    """Return ``raw`` (often a string from the command line) as the field's type."""
    kind = str(spec.type)
    try:
        if name == "options":
            return dict(raw) if isinstance(raw, Mapping) else _json_object(raw)
        if kind == "bool":
            return as_bool(raw)
        if kind == "int":
            return int(raw)
        if kind in ("float", "float | None"):
            return float(raw)
        return str(raw)
    except (TypeError, ValueError) as error:
        raise ParameterError(f"model client: {name}: expected {kind}, got {raw!r}") from error


def _json_object(raw: Any) -> dict[str, Any]:
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def as_bool(raw: Any) -> bool:
    """Return ``raw`` as a bool, accepting the strings the command line gives."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", "none", ""):
        return False
    raise ValueError(f"not a boolean: {raw!r}")


def _check_base_url(url: str) -> None:
    """Refuse a base URL the client cannot reach as written (no scheme, no host).

    Raises:
        ParameterError: naming the URL and the form expected.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = redact_url(url)
        raise ParameterError(
            f"model client: base_url {shown!r} is not http(s)://HOST[:PORT][/PATH], "
            f"e.g. http://localhost:8000/v1"
        )
