"""The kinds of model server sortie talks to, what each one does with a request, and its template.

One table: whether a server reads ``response_format`` (``transformers serve`` and Anthropic's
OpenAI-compatible endpoint ignore it, so the schema also goes into the prompt), and where it
tells the chat template it applies (llama.cpp's C++ ``llama-server`` at ``GET /props``,
Ollama at ``POST /api/show``; llama-cpp-python and the hosted APIs do not tell, so the user
states it with ``-a chat_template=...``). ``docs/models.md`` has the same table for people.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from sortie.models.config import ModelConfig, api_key
from sortie.models.health import is_local

ASK_TIMEOUT = 5.0
"""Seconds one question about the chat template may take."""
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True, slots=True)
class ServerKind:
    """What one kind of server does with what sortie sends."""

    name: str
    reads_response_format: bool = True
    """False: the server ignores ``response_format``; the schema goes into the prompt too."""
    template_route: str = ""
    """Where the server tells its chat template: ``/props`` or ``/api/show`` ("": nowhere)."""
    hosts: tuple[str, ...] = ()
    """Hosts of base URLs that are this kind of server."""
    port: int | None = None
    """The port this kind listens on by default, when no other kind claims it."""
    uncounted_cache: bool = False
    """Prompt tokens it had cached are left out of the count it reports (Ollama): a short
    count is no sign of a dropped message."""


KINDS: dict[str, ServerKind] = {
    kind.name: kind
    for kind in (
        ServerKind("openai-compatible"),
        ServerKind("vllm"),
        ServerKind("ollama", template_route="/api/show", port=11434, uncounted_cache=True),
        ServerKind("llama-cpp", template_route="/props"),
        ServerKind("llama-cpp-python"),
        ServerKind("transformers", reads_response_format=False),
        ServerKind("openai", hosts=("api.openai.com",)),
        ServerKind("gemini", hosts=("generativelanguage.googleapis.com",)),
        ServerKind("anthropic", reads_response_format=False, hosts=("api.anthropic.com",)),
    )
}
"""Every kind of server, by the name ``-a server=...`` gives."""
GENERIC = KINDS["openai-compatible"]


def server_kind(config: ModelConfig) -> ServerKind:
    """Return the kind of server ``config`` talks to: as set, else told by its URL."""
    if config.server:
        return KINDS[config.server]  # the config checked the name
    parts = urlsplit(config.base_url)
    for kind in KINDS.values():
        if parts.hostname in kind.hosts:
            return kind
    return next((k for k in KINDS.values() if k.port is not None and k.port == parts.port), GENERIC)


def template_name(text: str) -> str:
    """Return a short name for a chat template's text: its family, if known, and its hash."""
    families = (
        ("<start_of_turn>", "gemma"),
        ("<|im_start|>", "chatml"),
        ("<|start_header_id|>", "llama-3"),
        ("[INST]", "llama-2"),
        ("<|user|>", "phi/zephyr"),
    )
    family = next((name for marker, name in families if marker in text), "template")
    return f"{family} sha256:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def told_template(config: ModelConfig, kind: ServerKind) -> str | None:
    """Return the chat template the server says it applies (named by ``template_name``).

    None when the server does not tell (no route, an error, no template in the answer).
    A server of no known kind is asked at both routes if it is on this machine (a remote one
    is named with ``-a server=``: asking every hosted API costs two requests for nothing).
    """
    if kind is GENERIC and not is_local(config.base_url):
        return None
    routes = (kind.template_route,) if kind.template_route else ("/props", "/api/show")
    if kind is not GENERIC and not kind.template_route:
        return None
    for route in routes:
        text = _ask_template(config, route)
        if text:
            return f"{template_name(text)} (from {route})"
    return None


def _ask_template(config: ModelConfig, route: str) -> str | None:
    """Return the template text the server gives at ``route``, or None."""
    parts = urlsplit(config.base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    url = urlunsplit(parts._replace(path=root + route, query="", fragment=""))
    data = json.dumps({"model": config.model}).encode() if route == "/api/show" else None
    request = urllib.request.Request(url, data=data)
    request.add_header("Authorization", f"Bearer {api_key(config)}")
    request.add_header("Content-Type", "application/json")
    try:
        with _DIRECT.open(request, timeout=ASK_TIMEOUT) as answer:
            body = json.loads(answer.read(2_000_000))
    except urllib.error.HTTPError as refused:  # no such route: the server does not tell
        refused.close()
        return None
    except (OSError, ValueError):
        return None
    field = "template" if route == "/api/show" else "chat_template"
    text = body.get(field) if isinstance(body, dict) else None
    return text if isinstance(text, str) and text.strip() else None
