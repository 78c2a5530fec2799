"""The scorer of each mission family: a pure function from a trajectory record to metrics."""

from __future__ import annotations

from collections.abc import Callable

from sortie.core.records_io import Trajectory
from sortie.core.registry import Registry

Scorer = Callable[[Trajectory], dict[str, float]]

SCORERS: Registry[Scorer] = Registry("scorer")
SCORERS.add("rescue", "sortie.metrics.rescue:score_rescue")
SCORERS.add("aerial", "sortie.metrics.aerial:score_aerial")
SCORERS.add("household", "sortie.metrics.household:score_household")
