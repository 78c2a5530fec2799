import json
import math

import numpy as np
import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.records_io import Suite, SuiteHeader
from sortie.diagnostics.probe import ProbeRow, box_iou, probe_suite, summarise, true_box
from sortie.missions.aerial.spec import CAMERA as AERIAL_CAMERA
from sortie.testing.episodes import aerial_hop
from sortie.testing.model_server import ModelServer
from tests.models.conftest import FAST, secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")


def test_box_iou_by_hand():
    """Two 100×100 boxes overlapping by 50×100: 5000 / 15000."""
    assert box_iou((0, 0, 100, 100), (50, 0, 150, 100)) == pytest.approx(1 / 3)
    assert box_iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert box_iou((100, 100, 0, 0), (0, 0, 100, 100)) == 1.0  # corners in any order


def test_the_true_box_is_the_targets_pixels_in_thousandths():
    """Pixels 2..3 of 10 across and 5..9 of 10 down give [200, 500, 400, 1000]."""
    semantic = np.zeros((10, 10), np.int32)
    semantic[5:10, 2:4] = 7
    assert true_box(semantic, 7) == (200.0, 500.0, 400.0, 1000.0)
    assert true_box(semantic, 8) is None


def test_summary_correlates_with_mp_and_leaves_unseen_targets_out():
    """IoU rising with MP gives r = 1; the unseen mission counts but is not averaged."""
    rows = [
        ProbeRow(f"e{i}", (0, 0, 100, 100), (0, 0, 100, h), 10.0, 10.0 + e)
        for i, (h, e) in enumerate([(10, 1.0), (50, -2.0), (90, 2.0)])
    ]
    rows.append(ProbeRow("unseen", None, None, 30.0, None))
    summary = summarise(rows, {"e0": 0.2, "e1": 0.6, "e2": 1.0, "unseen": 0.0})
    assert summary.unseen == 1 and summary.mean_iou == pytest.approx(0.5)
    assert summary.distance_rmse == pytest.approx(math.sqrt((1 + 4 + 4) / 3))
    assert summary.r_iou_mp == pytest.approx(1.0)
    assert math.isnan(summarise(rows).r_iou_mp)


def test_the_probe_asks_the_model_about_the_first_frame():
    """A model that answers the true box exactly and 3 m too far: IoU 1, RMSE 3."""
    spec = aerial_hop()
    backend = EmbeddedBackend(body="multirotor", camera=AERIAL_CAMERA, sensors=("semantic",))
    semantic = backend.reset(spec, 0).frames.semantic
    names = {v: k for k, v in ((o, backend.instance_id(o)) for o in _names(backend))}
    target = names[int(semantic[128, 128])]
    truth = true_box(semantic, backend.instance_id(target))
    distance = math.dist(backend.pose().position(), backend.position_of(target))
    backend.close()
    spec = spec.model_copy(update={"targets": {"target": target}})
    answer = json.dumps({"box": list(truth), "distance": distance + 3.0})
    with ModelServer(lambda messages: answer) as server:
        rows = probe_suite(
            Suite(SuiteHeader(suite="p"), [spec]),
            {"model": "m", "base_url": server.base_url, **FAST},
            AERIAL_CAMERA,
        )
    summary = summarise(rows)
    assert summary.mean_iou == pytest.approx(1.0) and summary.distance_rmse == pytest.approx(3.0)


def _names(backend):
    return [o.name for o in backend.oracle_view().objects()]
