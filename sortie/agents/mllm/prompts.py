"""Prompt templates: editable text files, hashed, and written into the record at step 0.

Templates are ``string.Template`` files (``$name`` placeholders, so JSON braces need no
escaping) in ``sortie/agents/mllm/prompts/`` or in the folder an agent's ``prompt_dir``
argument names. The first step of every episode carries all templates in full in its agent
text, headed by their sha256, so a record says exactly which prompts produced it (``recover``
reads them back).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from sortie.core.errors import ConfigError

HEADER = "prompt templates sha256:"
_SECTION = re.compile(r"^=== (\S+) ===\n", re.M)
_END = "=== end of templates ==="


@dataclass(frozen=True, slots=True)
class Prompts:
    """The templates of one agent, by file name, and where they came from."""

    texts: dict[str, str]
    source: str

    @classmethod
    def load(cls, names: tuple[str, ...], folder: str | None = None) -> Prompts:
        """Read the templates ``names`` from ``folder``, or from the packaged ones.

        Raises:
            ConfigError: a template is missing from ``folder``.
        """
        if folder is None:
            root = resources.files("sortie.agents.mllm") / "prompts"
            return cls({name: (root / name).read_text("utf-8") for name in names}, "package")
        missing = [name for name in names if not (Path(folder) / name).is_file()]
        if missing:
            raise ConfigError(
                f"prompt_dir {folder}: missing {', '.join(missing)} (copy them "
                f"from sortie/agents/mllm/prompts/ and edit)"
            )
        return cls({name: (Path(folder) / name).read_text("utf-8") for name in names}, folder)

    @property
    def digest(self) -> str:
        """Return the sha256 of the templates (names and texts), hex."""
        hasher = hashlib.sha256()
        for name in sorted(self.texts):
            hasher.update(f"{name}\0{self.texts[name]}\0".encode())
        return hasher.hexdigest()

    def render(self, name: str, **values: object) -> str:
        """Return template ``name`` with its ``$placeholders`` filled (unknown ones kept)."""
        return Template(self.texts[name]).safe_substitute(values).strip()

    def record(self) -> str:
        """Return the text that step 0 carries: the digest, then every template in full."""
        parts = [f"{HEADER}{self.digest} (from {self.source})"]
        parts += [f"=== {name} ===\n{self.texts[name]}" for name in sorted(self.texts)]
        return "\n".join(parts) + f"\n{_END}\n"


def recover(text: str) -> dict[str, str]:
    """Return the templates written into a step's agent text by ``Prompts.record``."""
    body = text.split(_END, 1)[0]
    pieces = _SECTION.split(body)
    return {
        pieces[i]: pieces[i + 1][:-1] if pieces[i + 1].endswith("\n") else pieces[i + 1]
        for i in range(1, len(pieces) - 1, 2)
    }


def without_templates(text: str) -> str:
    """Return a step's agent text without the templates ``Prompts.record`` put before it."""
    if _END not in text:
        return text
    return text.split(_END, 1)[1].lstrip("\n")
