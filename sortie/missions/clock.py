"""The clocks a mission's budget can be counted on."""

from __future__ import annotations

from enum import StrEnum


class Clock(StrEnum):
    """Which clock the budget is counted on."""

    SIM = "sim"
    LATENCY = "latency"
