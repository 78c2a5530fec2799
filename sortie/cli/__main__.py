"""``python -m sortie.cli``: the ``sortie`` command."""

from sortie.cli import app

app()
