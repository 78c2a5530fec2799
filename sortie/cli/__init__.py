"""The ``sortie`` command line: one module per command (or two close ones), over library calls.

``app`` is the Typer application; importing the modules below registers their commands on it,
in the order ``sortie --help`` lists them (so they are not sorted).
"""

from sortie.cli.common import app  # noqa: I001
from sortie.cli import listing, importing, view, demo, running, generate  # noqa: F401
from sortie.cli import export, reporting, rescore, training, remote  # noqa: F401

__all__ = ["app"]
