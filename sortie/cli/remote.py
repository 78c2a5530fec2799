"""``sortie agent-server``, ``sortie play`` and ``sortie serve-executor``: agents over sockets."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
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
    _serve_until_stopped(lambda: play_suite(request, _say, ready), f"serve the page on port {port}")


@app.command("serve-executor")
def serve_executor(
    suite: Annotated[str, typer.Argument(help="Household suite name (e.g. household-v1) or file.")],
    episode: Annotated[
        list[str] | None, typer.Option(help="Episode id to play (repeatable; default: all).")
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on (with --connect: the planner's); loopback.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port to listen on (0: a free one); with --connect, the planner's.")
    ] = 10010,
    connect: Annotated[
        bool, typer.Option("--connect", help="Dial a planner that listens, as EMMOE's do.")
    ] = False,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow a host that is not loopback.")
    ] = False,
    views: Annotated[
        Path | None,
        typer.Option(help="Folder for the views (default: emmoe-views beside the records)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds a planner may take to answer before it is dropped.")
    ] = 300.0,
    label: Annotated[
        str, typer.Option(help="What the planner is (its model), kept with the run.")
    ] = "",
    repeats: Annotated[int, typer.Option(help="Runs of each episode (EMMOE makes 3).")] = 1,
    family_setting: Annotated[
        list[str] | None,
        typer.Option("--family-setting", "-F", help="Household setting k=v (`sortie families`)."),
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    run_id: Annotated[
        str | None, typer.Option(help="Run to resume or create (default: agent and time).")
    ] = None,
) -> None:
    """Let EMMOE's planners drive the household executor over its socket (docs/household.md).

    Each episode a planner plays to its end is stored as agent `emmoe-planner` and scored as
    any run; an episode left unfinished is played again by the next planner.
    """
    from sortie.remote.executor_server import ExecutorRequest
    from sortie.remote.executor_server import serve_executor as serve

    def ready(address: str) -> None:
        doing = "Dialled the planner at" if connect else "Serving EMMOE's executor protocol at"
        console.print(f"{doing} {escape(address)}; Ctrl-C stops")
        sys.stdout.flush()

    request = ExecutorRequest(
        suite,
        tuple(episode or ()),
        host,
        port,
        connect=connect,
        allow_remote=allow_remote,
        views=views,
        timeout=timeout,
        store=store,
        run_id=run_id,
        label=label,
        repeats=repeats,
        family_settings=parse_params(family_setting or [], "--family-setting"),
    )
    _serve_until_stopped(lambda: serve(request, _say, ready), f"use {host}:{port}")


def _say(line: str) -> None:
    """Print a server's progress line as written (it may quote names, never markup)."""
    console.print(escape(line))


def _serve_until_stopped(serve: Callable[[], object], doing: str) -> None:
    """Serve until Ctrl-C (exit 130); a refusal or a socket that cannot be used exits 2."""
    try:
        serve()
    except SortieError as error:
        raise fail(error) from None
    except OSError as error:
        raise fail(SortieError(f"cannot {doing}: {error.strerror or error}")) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
