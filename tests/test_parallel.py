"""The suite on several processes (``pytest -n``, as ``make test`` runs it)."""

import pytest

from tests.conftest import SERIAL, grouped


@SERIAL
def test_a_grouped_test_carries_the_group_xdist_schedules_by(request):
    """Under ``--dist loadgroup`` a test marked SERIAL ends its id with ``@serial``."""
    if not grouped(request.config):
        pytest.skip("checked under pytest -n (make test), where the groups apply")
    assert request.node.nodeid.endswith("@serial")
