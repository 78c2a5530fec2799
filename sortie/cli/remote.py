"""``sortie agent-server`` and ``sortie play``: an agent served, a person playing."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from sortie.cli.common import (
    DEFAULT_STORE,
    AgentArgOption,
    StoreOption,
    app,
    console,
    fail,
    parse_params,
)
from sortie.core.errors import SortieError


@app.command("agent-server")
def agent_server(
    agent: Annotated[str, typer.Option(help="Registered agent to serve (random, explorer, ...).")],
    agent_arg: AgentArgOption = None,
    host: Annotated[
        str, typer.Option(help="Address to bind (loopback; 0.0.0.0 lets others in).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0: a free one).")] = 8765,
) -> None:
    """Serve a registered agent over HTTP for `--agent remote -a url=...` (docs/remote.md).

    With SORTIE_AGENT_TOKEN set, only requests bearing that token are answered.
    """
    from sortie.remote.served import AgentEndpoint
    from sortie.remote.server import AgentServer

    try:
        server = AgentServer(AgentEndpoint(agent, parse_params(agent_arg or [])), host, port)
    except SortieError as error:
        raise fail(error) from None
    except OSError as error:
        raise fail(SortieError(f"cannot listen on {host}:{port}: {error.strerror}")) from None
    guarded = "a token is required" if server.token else "no token required"
    console.print(f"Serving {escape(agent)} at {server.url} ({guarded}); Ctrl-C stops")
    sys.stdout.flush()  # the address must reach a pipe now, not when the buffer fills
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        raise typer.Exit(code=0) from None


@app.command()
def play(
    suite: Annotated[str, typer.Argument(help="Suite name (e.g. rescue-l1-v2) or file.")],
    episode: Annotated[
        list[str] | None, typer.Option(help="Episode id to play (repeatable; default: all).")
    ] = None,
    port: Annotated[
        int, typer.Option(help="Port of the page on 127.0.0.1 (0: a free one).")
    ] = 8766,
    store: StoreOption = DEFAULT_STORE,
    run_id: Annotated[
        str | None, typer.Option(help="Run to resume or create (default: human and time).")
    ] = None,
) -> None:
    """Play a suite yourself in a browser, one key press per step; stored as agent `human`.

    The run counts time on the latency clock, so your decision time is mission time.
    """
    from sortie.remote.play import PlayRequest
    from sortie.remote.play import play as play_suite

    def ready(url: str) -> None:
        console.print(f"Open {url} in a browser and play (keys are on the page); Ctrl-C stops")
        sys.stdout.flush()

    request = PlayRequest(suite, tuple(episode or ()), port, store, run_id)
    try:
        play_suite(request, lambda line: console.print(escape(line)), ready)
    except SortieError as error:
        raise fail(error) from None
    except OSError as error:
        raise fail(SortieError(f"cannot serve the page on port {port}: {error.strerror}")) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
