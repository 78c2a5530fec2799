"""What the client learns from refusals: the format each kind of request gets, the fields sent.

A server that refuses ``json_schema`` for one schema may take it for another, and a refusal
can be passing (a busy grammar compiler), so the format steps down per kind of request (its
schema's name) and, after ``UPWARD_AFTER`` answers in a weaker format, the stronger one is
tried once more. A model that refuses a field (OpenAI's reasoning models refuse
``max_tokens`` and ``temperature``) gets the field renamed (``max_completion_tokens``) or
left out from then on; ``token_field`` and ``omit`` set the same up front.
"""

from __future__ import annotations

from typing import Any

from sortie.models.config import ModelConfig, Structured

UPWARD_AFTER = 50
"""Answers in a weaker format after which the stronger one is tried again (once)."""
RENAMES = {"max_tokens": "max_completion_tokens"}
"""A refused field and the name the same setting goes by on servers that refuse it."""
DROPPABLE = frozenset({"temperature", "top_p", "max_completion_tokens"})
"""Fields left out when refused: the model's own default then applies."""
PARAM_PREFIX = "parameter "
"""How a stored refusal of a field begins (``parameter 'max_tokens' refused: ...``)."""


class Formats:
    """The structured-output mode of each kind of request, stepping down and up again."""

    def __init__(self, start: str, upward_after: int = UPWARD_AFTER) -> None:
        """Start every kind at ``start``; try a stronger mode after ``upward_after`` answers."""
        self.start, self.upward_after = start, upward_after
        self._modes: dict[str, str] = {}
        self._answered: dict[str, int] = {}

    def mode(self, kind: str) -> str:
        """Return the mode to ask ``kind`` in now."""
        return self._modes.get(kind, self.start)

    def step_down(self, kind: str) -> bool:
        """Use the next weaker mode for ``kind``; return False if there is none."""
        chain = Structured.CHAIN
        position = chain.index(self.mode(kind))
        if position + 1 >= len(chain):
            return False
        self._modes[kind], self._answered[kind] = chain[position + 1], 0
        return True

    def answered(self, kind: str) -> None:
        """Count an answer of ``kind``; after enough in a weaker mode, try one step up."""
        mode = self.mode(kind)
        if mode == self.start:
            return
        self._answered[kind] = self._answered.get(kind, 0) + 1
        if self._answered[kind] >= self.upward_after:
            self._modes[kind] = Structured.CHAIN[Structured.CHAIN.index(mode) - 1]
            self._answered[kind] = 0


class Fields:
    """The request fields the model takes: renamed or left out after a refusal, or up front."""

    ADAPTABLE = (*RENAMES, *DROPPABLE)
    """Every field a refusal can rename or leave out (bounds the tries of one request)."""

    def __init__(self, config: ModelConfig) -> None:
        """Start from the settings ``token_field`` and ``omit``."""
        self.renamed: dict[str, str] = (
            {"max_tokens": config.token_field} if config.token_field != "max_tokens" else {}
        )
        self.omitted = set(config.omit_fields)

    def apply(self, request: dict[str, Any]) -> dict[str, Any]:
        """Return ``request`` with the refused fields renamed or left out."""
        out = {self.renamed.get(name, name): value for name, value in request.items()}
        return {name: value for name, value in out.items() if name not in self.omitted}

    def refuse(self, field: str) -> bool:
        """Rename or leave out ``field`` from now on; return False if it cannot be done."""
        if field in RENAMES and field not in self.renamed:
            self.renamed[field] = RENAMES[field]
            return True
        if field in DROPPABLE and field not in self.omitted:
            self.omitted.add(field)
            return True
        return False


def refused_field(rejected: str) -> str | None:
    """Return the field a stored refusal names, or None for a refused format."""
    if not rejected.startswith(PARAM_PREFIX):
        return None
    return rejected[len(PARAM_PREFIX) :].split("'")[1]


def param_refusal(field: str, detail: str) -> str:
    """Return the stored reason of a refused field (read back by ``refused_field``)."""
    return f"{PARAM_PREFIX}'{field}' refused: {detail}"
