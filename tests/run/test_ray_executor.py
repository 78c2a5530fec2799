import ipaddress

import pytest

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from tests.conftest import SERIAL

pytestmark = SERIAL  # a local Ray instance (tests/conftest.py)


def test_a_local_ray_instance_listens_on_loopback_only(tmp_path, smoke3):
    """While a run is on local Ray, every TCP listener of Ray's processes is on loopback."""
    pytest.importorskip("ray", reason="the Ray executor needs: pip install 'sortie[ray]'")
    psutil = pytest.importorskip("psutil")
    listeners: list[tuple[str, str, int]] = []

    def look(result: object) -> None:
        if not listeners:  # Ray is up and has run a task: every server it starts is listening
            listeners.extend(_listeners(psutil))

    request = RunRequest(
        (str(smoke3),), "random", workers=2, executor="ray", store=tmp_path / "s.db", run_id="net"
    )
    with Store(request.store) as store:
        execute(plan_run(request, store), request, store, on_result=look)
    assert {"gcs_server", "raylet"} <= {name for name, _, _ in listeners}
    assert [entry for entry in listeners if not _loopback(entry[1])] == []


def _listeners(psutil) -> list[tuple[str, str, int]]:
    """Return (process name, address, port) of every TCP socket this process tree listens on."""
    here = psutil.Process()
    found = []
    for process in (here, *here.children(recursive=True)):
        try:
            sockets = process.net_connections(kind="tcp")
            name = process.name()
        except psutil.NoSuchProcess:
            continue
        found += [(name, s.laddr.ip, s.laddr.port) for s in sockets if s.status == "LISTEN"]
    return found


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1, an IPv4 socket on tcp6
    return (mapped or ip).is_loopback
