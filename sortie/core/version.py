"""sortie's version: written into every record and store, so it lives below everything."""

VERSION = "0.1.0"
"""The same as ``pyproject.toml``'s (a test checks that they agree)."""
