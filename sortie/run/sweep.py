"""``sortie sweep``: one run per setting of the agent arguments being varied (the ablations).

``--vary temperature=0,0.7 --vary history=0,2`` makes four runs, each a normal stored,
resumable run whose id names its setting (``<base>-history=0-temperature=0.7``), so the
comparison table is an ordinary report over those runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence

from sortie.core.errors import ParameterError
from sortie.run.batch import RunRequest


def parse_vary(items: Sequence[str]) -> dict[str, list[str]]:
    """Return ``{argument: [values]}`` from ``name=v1,v2`` items.

    Raises:
        ParameterError: an item without ``=`` or values, or an argument given twice.
    """
    vary: dict[str, list[str]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        listed = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not name or not listed:
            raise ParameterError(f"--vary {item!r}: expected name=value1,value2,...")
        if name in vary:
            raise ParameterError(f"--vary {name}: given twice; list all its values in one")
        vary[name] = listed
    return vary


def sweep_requests(base: RunRequest, vary: dict[str, list[str]]) -> list[RunRequest]:
    """Return one request per combination of the varied arguments, named after it."""
    prefix = base.run_id or f"{base.agent}-sweep"
    names = sorted(vary)
    requests = []
    for values in itertools.product(*(vary[name] for name in names)):
        setting = dict(zip(names, values, strict=True))
        # A run id names files: characters it may not hold (a model's "/") become "_".
        label = re.sub(
            r"[^A-Za-z0-9._=-]", "_", "-".join(f"{name}={value}" for name, value in setting.items())
        )
        requests.append(
            dataclasses.replace(
                base, agent_args={**base.agent_args, **setting}, run_id=f"{prefix}-{label}"
            )
        )
    return requests
