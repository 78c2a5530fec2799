"""Why a candidate episode is refused while generating: one exception for every family."""

from __future__ import annotations


class Rejected(Exception):
    """A candidate that breaks a rule; the message says which (it is counted, then retried)."""
