"""``sortie agent-server`` and ``sortie play``: an agent served, a person playing."""

from __future__ import annotations

import os
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
    no_token: Annotated[
        bool, typer.Option("--no-token", help="Answer requests without a token.")
    ] = False,
) -> None:
    """Serve a registered agent over HTTP for `--agent remote -a url=...` (docs/remote.md).

    Every request must bear a token: SORTIE_AGENT_TOKEN's, or a new one printed at the start
    (the remote agent on this machine finds it by itself); --no-token serves without one.
    """
    from sortie.remote.served import AgentEndpoint
    from sortie.remote.server import TOKEN_ENV, AgentServer, new_token

    token = None if no_token else (os.environ.get(TOKEN_ENV) or new_token())
    try:
        endpoint = AgentEndpoint(agent, parse_params(agent_arg or []))
        server = AgentServer(endpoint, host, port, token=token)
    except SortieError as error:
        raise fail(error) from None
    except OSError as error:
        raise fail(SortieError(f"cannot listen on {host}:{port}: {error.strerror}")) from None
    guarded = "a token is required" if server.token else "no token required"
    try:
        with server.published() as path:  # the token is there before the address is printed
            console.print(f"Serving {escape(agent)} at {server.url} ({guarded}); Ctrl-C stops")
            if server.token and not os.environ.get(TOKEN_ENV):
                console.print(f"Token: {server.token}", soft_wrap=True)
                console.print(f"(in {escape(str(path))}; elsewhere set {TOKEN_ENV} to it)")
            sys.stdout.flush()  # the address must reach a pipe now, not when the buffer fills
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
