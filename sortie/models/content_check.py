"""Checking, before a run, that the server's chat template keeps what sortie sends.

Some chat templates drop part of a request without a word: llama-cpp-python's built-in chat
formats drop every message whose content is a list of parts (an image-mode agent's whole
user turn: clue, memory, images), some drop the system message (the actions, the schema).
The model then answers a prompt it never saw, and the run looks normal. The only trace is
the prompt token count the server reports, so three small requests are compared: the same
kind of text as a plain user message, as a list of parts, and without its system message.
Every probe starts with its own word, so a server that does not count a cached prefix
(Ollama) counts each one whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sortie.core.errors import ConfigError

Message = dict[str, Any]
Counter = Callable[[list[Message]], int]
"""Sends messages as the run will (its folding, its fields) and returns the prompt tokens."""
_WORDS = (
    "the rescue team walks north along the river bank past a red barn and a fallen tree "
    "toward the old stone bridge where a stretcher waits beside the ambulance "
)
LOST = 0.5
"""Share of a part's tokens below which the part counts as dropped."""


@dataclass(frozen=True, slots=True)
class Probe:
    """The prompt token counts of the three probes."""

    text: int
    parts: int
    no_system: int


def probe_messages(tag: str, list_content: bool = False, system: bool = True) -> list[Message]:
    """Return one probe: a system message and a user turn of about 150 tokens each."""
    user = f"{tag} user {_WORDS * 4}Answer OK."
    content: Any = [{"type": "text", "text": user}] if list_content else user
    messages = [{"role": "system", "content": f"{tag} system {_WORDS * 4}"}] if system else []
    return [*messages, {"role": "user", "content": content}]


def measure(count: Counter) -> Probe | None:
    """Return the three probes' token counts, or None if the server reports none."""
    probe = Probe(
        count(probe_messages("alpha")),
        count(probe_messages("bravo", list_content=True)),
        count(probe_messages("charlie", system=False)),
    )
    return probe if min(probe.text, probe.parts) > 0 else None


def check_content(count: Counter, where: str, system_folded: bool, parts: bool = True) -> None:
    """Raise ConfigError if the server's template drops list content or the system message.

    Args:
        count: sends messages as the run will and returns the prompt tokens counted.
        where: the server and model, for the message.
        system_folded: the run folds the system prompt into the user turn (``system=user``),
            so a dropped system message does not matter.
        parts: the run sends list content (images); if not, dropped lists do not matter.

    Raises:
        ConfigError: one line naming what is dropped, the counts, and the fix.
    """
    probe = measure(count)
    if probe is None:
        return
    user = probe.no_system or probe.text // 2  # the system probe is as long as the user one
    if parts and probe.parts < probe.text - LOST * user:
        raise ConfigError(
            f"{where} drops messages whose content is a list of parts (text and images): a "
            f"prompt counted {probe.text} tokens as plain text counted {probe.parts} as "
            f"parts; its chat template cannot read them (llama-cpp-python's built-in chat "
            f"formats cannot). Serve the model with a template that reads list content "
            f"(llama.cpp's llama-server --jinja; vLLM; Ollama), or send plain text: "
            f"-a observation=text"
        )
    if not system_folded and probe.no_system > 0 and probe.text - user < LOST * user:
        raise ConfigError(
            f"{where} drops the system message: a prompt counted {probe.text} tokens with it "
            f"and {probe.no_system} without it; its chat template leaves it out. Pass -a "
            f"system=user (the system prompt goes into the first user message), or serve "
            f"the model with a template that keeps it"
        )
