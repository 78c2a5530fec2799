"""Benchmark the agent server over loopback: one request's round trip, and a burst at once.

Serves a policy that walks straight on (``sortie.remote.policy``), then times ``--requests``
hellos on one keep-alive connection (a step's round trip, without the policy's own work) and
``--burst`` connections opened at once, each asking one hello. Wall time: the client and the
server share the machine, and waiting on the network is what is measured.

Run: ``.venv/bin/python bench/bench_remote.py [--requests 2000] [--burst 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import time

from rich.console import Console
from rich.table import Table

from sortie.remote.policy import PolicyEndpoint
from sortie.remote.server import AgentServer


class Walker:
    """Walks straight on: the cheapest policy, so the server's own cost shows."""

    def reset(self, brief: object, seed: int) -> None:
        """Nothing to remember."""

    def act(self, observation: object) -> dict[str, object]:
        """Step forward."""
        return {"type": "move", "turn": 0.0, "speed": 1.0}


def round_trips(host: str, port: int, requests: int) -> float:
    """Return the mean seconds of a hello on one keep-alive connection."""
    connection = http.client.HTTPConnection(host, port, timeout=30)
    started = time.perf_counter()
    for _ in range(requests):
        connection.request("GET", "/v1/hello")
        connection.getresponse().read()
    connection.close()
    return (time.perf_counter() - started) / requests


async def _hello(host: str, port: int) -> bool:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET /v1/hello HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), 60.0)
    writer.close()
    return line.startswith(b"HTTP/1.1 200")


async def _burst(host: str, port: int, count: int) -> int:
    return sum(await asyncio.gather(*(_hello(host, port) for _ in range(count))))


def main() -> None:
    """Time both and print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--burst", type=int, default=300)
    args = parser.parse_args()
    server = AgentServer(PolicyEndpoint(Walker, "walker", ["rescue"])).start()
    host, port = server.http.address
    try:
        mean = round_trips(host, port, args.requests)
        started = time.perf_counter()
        answered = asyncio.run(_burst(host, port, args.burst))
        burst = time.perf_counter() - started
    finally:
        server.stop()
    table = Table(title="Agent server over loopback (wall time)")
    for column in ("measure", "value"):
        table.add_column(column, justify="right")
    table.add_row(f"hello round trip, mean of {args.requests}", f"{mean * 1000:.2f} ms")
    table.add_row(f"{args.burst} connections at once: answered", f"{answered} of {args.burst}")
    table.add_row(f"{args.burst} connections at once: all answered in", f"{burst:.2f} s")
    Console().print(table)


if __name__ == "__main__":
    main()
